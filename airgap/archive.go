package airgap

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// ErrNotArchive is wrapped when --to oci-archive:FILE names an existing
// file that is not an OCI image archive.
var ErrNotArchive = errors.New("not an OCI image archive")

// An oci-archive:FILE target is an OCI image layout in one uncompressed
// tar file, the format skopeo's oci-archive: transport reads (and `mirror
// --from oci-archive:FILE` loads into a registry). Layers are compressed
// already; compressing the tar again would save little and lose the
// in-place reads --from relies on.
//
// It is written in two steps: images are mirrored into a staging layout
// beside the file (.FILE.partial/, resumable like any oci: layout: a killed
// or failed run keeps what it completed), then packed into a temporary
// file renamed over FILE, and the staging layout removed. The tar is
// deterministic: entries sorted by name, owner root, mode 0644 (0755 for
// directories), modification time the epoch; only blobs reachable from
// index.json are packed, each hashed again on the way. An existing FILE is
// unpacked into the staging layout first (every blob verified), so its
// images are kept and not fetched again.
type archiveWriter struct {
	file    string
	staging *layout
}

func stagingDir(file string) string {
	return filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".partial")
}

func openArchive(ctx context.Context, file string) (*archiveWriter, error) {
	st, err := os.Stat(file)
	exists := err == nil
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("checking oci-archive:%s: %w", file, unwrapPath(err))
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("oci-archive:%s: %w (it is not a regular file); choose a new file name", file, ErrNotArchive)
	}
	var old *archiveStore
	if exists {
		if old, err = openArchiveStore(file); err != nil {
			return nil, fmt.Errorf("oci-archive:%s: %w (%v); choose a new file name", file, ErrNotArchive, errors.Unwrap(err))
		}
		defer old.close()
		if _, ok := old.entry(layoutFile); !ok {
			return nil, fmt.Errorf("oci-archive:%s: %w (no %s in it); choose a new file name", file, ErrNotArchive, layoutFile)
		}
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return nil, fmt.Errorf("creating the directory of oci-archive:%s: %w", file, err)
	}
	if err := removeStaleTemps(file); err != nil {
		return nil, err
	}
	staging, err := openLayout(stagingDir(file))
	if err != nil {
		return nil, err
	}
	a := &archiveWriter{file: file, staging: staging}
	if old != nil {
		if err := a.unpack(ctx, old); err != nil {
			staging.close()
			return nil, fmt.Errorf("reading the existing oci-archive:%s: %w", file, err)
		}
	}
	return a, nil
}

func (a *archiveWriter) close() { a.staging.close() }

// removeStaleTemps removes temporary archives a killed run left beside file.
func removeStaleTemps(file string) error {
	dir, prefix := filepath.Dir(file), "."+filepath.Base(file)+".tmp-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("removing what an earlier run left: %w", err)
			}
		}
	}
	return nil
}

// unpack copies the blobs of an existing archive into the staging layout,
// verifying each against its name, and keeps its index entries.
func (a *archiveWriter) unpack(ctx context.Context, old *archiveStore) error {
	l := a.staging
	names := make([]string, 0, len(old.files))
	for n := range old.files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		hexDigest, ok := strings.CutPrefix(n, "blobs/sha256/")
		if !ok || len(hexDigest) != 64 || strings.Trim(hexDigest, "0123456789abcdef") != "" {
			continue
		}
		e := old.files[n]
		d := v1.Descriptor{Digest: v1.Hash{Algorithm: "sha256", Hex: hexDigest}, Size: e.size}
		if ok, err := l.has(d); err != nil || ok {
			if err != nil {
				return err
			}
			continue
		}
		if err := l.write(ctx, d, io.NewSectionReader(old.f, e.offset, e.size), func(int64) {}); err != nil {
			return err
		}
	}
	data, err := old.readFile(indexFile, maxIndexFile)
	if err != nil {
		return fmt.Errorf("reading %s: %w", indexFile, err)
	}
	idx, err := v1.ParseIndexManifest(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("reading %s: %w", indexFile, err)
	}
	have := map[string]bool{}
	for _, d := range l.index.Manifests {
		have[d.Annotations[AnnotationRefName]] = true
	}
	for _, d := range idx.Manifests {
		if n := d.Annotations[AnnotationRefName]; n == "" || !have[n] {
			l.index.Manifests = append(l.index.Manifests, d)
		}
	}
	return nil
}

// commit packs the staging layout into the archive and removes it.
func (a *archiveWriter) commit(ctx context.Context) error {
	l := a.staging
	blobs, err := l.reachable()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(a.file), "."+filepath.Base(a.file)+".tmp-")
	if err != nil {
		return fmt.Errorf("writing oci-archive:%s: %w", a.file, err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := l.pack(ctx, tmp, blobs); err != nil {
		return fmt.Errorf("writing oci-archive:%s: %w", a.file, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing oci-archive:%s: %w", a.file, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing oci-archive:%s: %w", a.file, err)
	}
	if err := os.Rename(tmp.Name(), a.file); err != nil {
		return fmt.Errorf("writing oci-archive:%s: %w", a.file, err)
	}
	ok = true
	l.close()
	if err := os.RemoveAll(l.dir); err != nil {
		return fmt.Errorf("removing the staging layout %s: %w", l.dir, err)
	}
	return nil
}

// reachable lists the blobs index.json leads to that the layout holds
// (the other platforms of a partial index are not there), sorted.
func (l *layout) reachable() ([]v1.Descriptor, error) {
	seen := map[v1.Hash]v1.Descriptor{}
	var visit func(d v1.Descriptor, depth int) error
	visit = func(d v1.Descriptor, depth int) error {
		if _, ok := seen[d.Digest]; ok {
			return nil
		}
		if d.Digest.Algorithm != "sha256" || len(d.Digest.Hex) != 64 {
			return fmt.Errorf("%w: descriptor digest %q is not sha256", ErrUnsupported, d.Digest)
		}
		st, err := os.Stat(l.path(d.Digest))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		d.Size = st.Size()
		seen[d.Digest] = d
		if !d.MediaType.IsIndex() && !d.MediaType.IsImage() {
			return nil
		}
		if depth > maxIndexDepth {
			return fmt.Errorf("%w: indexes nested deeper than %d", ErrUnsupported, maxIndexDepth)
		}
		data, err := os.ReadFile(l.path(d.Digest))
		if err != nil {
			return err
		}
		if d.MediaType.IsIndex() {
			idx, err := v1.ParseIndexManifest(bytes.NewReader(data))
			if err != nil {
				return fmt.Errorf("parsing index %s: %w", d.Digest, err)
			}
			for _, c := range idx.Manifests {
				if err := visit(c, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		mf, err := v1.ParseManifest(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("parsing manifest %s: %w", d.Digest, err)
		}
		if err := visit(mf.Config, depth+1); err != nil {
			return err
		}
		for _, b := range mf.Layers {
			if err := visit(b, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	for _, d := range l.index.Manifests {
		if err := visit(d, 0); err != nil {
			return nil, err
		}
	}
	out := make([]v1.Descriptor, 0, len(seen))
	for _, d := range seen {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Digest.Hex < out[j].Digest.Hex })
	return out, nil
}

// epoch is the modification time of every archive entry.
var epoch = time.Unix(0, 0).UTC()

// pack writes the layout as a tar: blobs/, blobs/sha256/, the blobs,
// index.json and oci-layout, in that (sorted) order, each blob hashed
// again as it is read.
func (l *layout) pack(ctx context.Context, w io.Writer, blobs []v1.Descriptor) error {
	bw := bufio.NewWriterSize(w, copyBufferSize)
	tw := tar.NewWriter(bw)
	dir := func(name string) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: epoch})
	}
	file := func(name string, size int64) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: size, ModTime: epoch})
	}
	if err := dir("blobs/"); err != nil {
		return err
	}
	if err := dir("blobs/sha256/"); err != nil {
		return err
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	for _, d := range blobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := os.Open(l.path(d.Digest))
		if err != nil {
			return err
		}
		h := sha256.New()
		err = file("blobs/sha256/"+d.Digest.Hex, d.Size)
		if err == nil {
			_, err = io.CopyBuffer(io.MultiWriter(tw, h), io.LimitReader(f, d.Size), *bp)
		}
		f.Close()
		if err != nil {
			return err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != d.Digest.Hex {
			return fmt.Errorf("blob %s in %s: %w: got sha256:%s", d.Digest, l.dir, ErrDigestMismatch, got)
		}
	}
	for _, name := range []string{indexFile, layoutFile} {
		data, err := os.ReadFile(filepath.Join(l.dir, name))
		if err != nil {
			return err
		}
		if err := file(name, int64(len(data))); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}
