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
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

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
// images are kept and not fetched again. With a part size, the tar is
// written as a split archive (parts.go) instead of one file.
//
// From a layout (mirror --from) into a new archive there is nothing to
// fetch and nothing to resume: the tar is packed straight from the source,
// every blob verified on the way (packDirect).
type archiveWriter struct {
	file     string
	partSize int64
	sign     SignFunc
	staging  *layout
}

func stagingDir(file string) string {
	return filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".partial")
}

// archiveExists reports whether FILE, or a split archive under its name,
// or a staging layout of an earlier run is there.
func archiveExists(file string) bool {
	for _, p := range []string{file, file + PartsSuffix, stagingDir(file)} {
		if _, err := os.Lstat(p); err == nil {
			return true
		}
	}
	return false
}

// checkArchiveName refuses to write one file where a split archive of the
// name is, and parts where one file is: a reader would take the other.
func checkArchiveName(file string, partSize int64) error {
	if partSize > 0 {
		if st, err := os.Lstat(file); err == nil && !st.IsDir() {
			return fmt.Errorf("oci-archive:%s exists as one file; --max-size writes %s, %s… and %s beside it: choose another name or remove it", file, filepath.Base(PartName(file, 1)), filepath.Base(PartName(file, 2)), filepath.Base(file+PartsSuffix))
		}
		return nil
	}
	if _, err := os.Lstat(file + PartsSuffix); err == nil {
		return fmt.Errorf("oci-archive:%s is a split archive (%s): add --max-size to write it again, or choose another name", file, filepath.Base(file+PartsSuffix))
	}
	return nil
}

// openArchive opens FILE for writing: its staging layout, holding the
// images of an existing FILE (or split archive). writingBundle says whether
// a differential bundle is written: an existing archive must then be one,
// and must not otherwise.
func openArchive(ctx context.Context, file string, partSize int64, writingBundle bool) (*archiveWriter, error) {
	if err := checkArchiveName(file, partSize); err != nil {
		return nil, err
	}
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
	} else if partSize > 0 {
		if _, err := os.Lstat(file + PartsSuffix); err == nil {
			// An earlier set: its images are kept when it reads back whole;
			// one with a part missing or damaged is written again from
			// this run's images (the parts that still match are kept).
			if old, err = openArchiveStore(file + PartsSuffix); err != nil {
				if !errors.Is(err, ErrBadParts) {
					return nil, err
				}
				slog.Info("writing the split archive again: the earlier one does not read back", "reason", err.Error())
				old = nil
			}
		}
	}
	if old != nil {
		defer old.close()
		if _, ok := old.entry(layoutFile); !ok {
			return nil, fmt.Errorf("oci-archive:%s: %w (no %s in it); choose a new file name", file, ErrNotArchive, layoutFile)
		}
		data, err := old.readFile(layoutFile, maxLayoutFile)
		if err == nil {
			err = checkLayoutVersion(data)
		}
		if err != nil {
			return nil, fmt.Errorf("oci-archive:%s: %w", file, err)
		}
		_, isBundle := old.entry(BundleFile)
		_, hasIndex := old.entry(indexFile)
		if err := checkBundleMix(Target{Transport: TransportArchive, Path: file}, isBundle, hasIndex, writingBundle); err != nil {
			return nil, err
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
	a := &archiveWriter{file: file, partSize: partSize, staging: staging}
	if old != nil {
		if err := a.unpack(ctx, old); err != nil {
			staging.close()
			return nil, fmt.Errorf("reading the existing oci-archive:%s: %w", file, err)
		}
	}
	return a, nil
}

func (a *archiveWriter) close() { a.staging.close() }

// discard removes the staging layout, leaving the archive as it was.
func (a *archiveWriter) discard() {
	a.staging.close()
	os.RemoveAll(a.staging.dir)
}

// removeStaleTemps removes temporary archives and parts a killed run left
// beside file.
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
		if err := l.write(ctx, d, io.NewSectionReader(old.r, e.offset, e.size), func(int64) {}); err != nil {
			return err
		}
	}
	// A bundle's file comes along: the run writes it again, and it says
	// what the staging layout is meanwhile.
	if b, err := old.readFile(BundleFile, maxBundleFile); err == nil {
		if err := l.writeTopFile(BundleFile, b); err != nil {
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
func (a *archiveWriter) commit(ctx context.Context) (archiveResult, error) {
	l := a.staging
	blobs, err := l.reachable(ctx)
	if err != nil {
		return archiveResult{}, err
	}
	entries := make([]packBlob, len(blobs))
	for i, d := range blobs {
		entries[i] = packBlob{desc: d, open: func() (io.ReadCloser, error) { return os.Open(l.path(d.Digest)) }}
	}
	var files []packFile
	for _, name := range []string{indexFile, BundleFile, layoutFile} {
		data, err := os.ReadFile(filepath.Join(l.dir, name))
		if errors.Is(err, fs.ErrNotExist) && name == BundleFile {
			continue
		}
		if err != nil {
			return archiveResult{}, err
		}
		files = append(files, packFile{name: name, data: data})
	}
	res, err := writeArchive(ctx, a.file, a.partSize, a.sign, entries, files, func(int64, int) {})
	if err != nil {
		return res, err
	}
	l.close()
	if err := os.RemoveAll(l.dir); err != nil {
		return res, fmt.Errorf("removing the staging layout %s: %w", l.dir, err)
	}
	return res, nil
}

// archiveResult is what writing an archive did.
type archiveResult struct {
	// Bytes is the archive's size; Parts and Written the parts of a split
	// archive, and how many of them were written (the others matched).
	Bytes          int64
	Parts, Written int
}

// packBlob is a blob to pack, opened when its turn comes.
type packBlob struct {
	desc v1.Descriptor
	open func() (io.ReadCloser, error)
}

// packFile is a top-level file of the layout (index.json, oci-layout, the
// bundle file).
type packFile struct {
	name string
	data []byte
}

// writeArchive writes the tar of blobs (sorted by digest) and files
// (sorted by name) to file, through a temporary file renamed into place,
// or, with a part size, as a split archive. counted is told the blob bytes
// packed, with the index of the blob. With sign, the archive (or the list
// of a split archive) is signed (archive_signature.go).
func writeArchive(ctx context.Context, file string, partSize int64, sign SignFunc, blobs []packBlob, files []packFile, counted func(n int64, blob int)) (archiveResult, error) {
	total := tarSize(blobs, files)
	if partSize > 0 {
		pw, err := newPartWriter(file, partSize, total)
		if err != nil {
			return archiveResult{}, err
		}
		pw.sign = sign
		if err := packTar(ctx, pw, blobs, files, counted); err != nil {
			pw.abort()
			return archiveResult{}, fmt.Errorf("writing oci-archive:%s: %w", file, err)
		}
		if err := pw.commit(ctx); err != nil {
			pw.abort()
			return archiveResult{}, err
		}
		return archiveResult{Bytes: total, Parts: pw.n, Written: pw.Written}, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".tmp-")
	if err != nil {
		return archiveResult{}, fmt.Errorf("writing oci-archive:%s: %w", file, err)
	}
	ok := false
	disk := newDiskWriter()
	defer func() {
		disk.stop()
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	// Hashed as it is written, for the signature: the archive is not
	// read again.
	h := sha256.New()
	err = packTar(ctx, writerFunc(func(p []byte) (int, error) { h.Write(p); return len(p), disk.write(tmp, p) }), blobs, files, counted)
	if ferr := disk.flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return archiveResult{}, fmt.Errorf("writing oci-archive:%s: %w", file, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return archiveResult{}, err
	}
	if err := tmp.Sync(); err != nil {
		return archiveResult{}, fmt.Errorf("writing oci-archive:%s: %w", file, err)
	}
	if err := tmp.Close(); err != nil {
		return archiveResult{}, fmt.Errorf("writing oci-archive:%s: %w", file, err)
	}
	if err := removeSignature(file); err != nil {
		return archiveResult{}, err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return archiveResult{}, fmt.Errorf("writing oci-archive:%s: %w", file, err)
	}
	ok = true
	if err := writeSignature(ctx, sign, file, h.Sum(nil), func() (io.ReadCloser, error) { return os.Open(file) }); err != nil {
		return archiveResult{}, err
	}
	return archiveResult{Bytes: total}, nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// reachable lists the blobs index.json leads to that the layout holds
// (the other platforms of a partial index are not there, nor the blobs a
// bundle leaves out), sorted by digest.
func (l *layout) reachable(ctx context.Context) ([]v1.Descriptor, error) {
	s, err := openLayoutStore(OCI(l.dir), registryclient.Options{})
	if err != nil {
		return nil, err
	}
	defer s.close()
	r, err := s.reach(ctx, false)
	if err != nil {
		return nil, err
	}
	blobs := r.Blobs()
	out := make([]v1.Descriptor, len(blobs))
	for i, b := range blobs {
		out[i] = v1.Descriptor{Digest: b.Digest, Size: b.Size}
	}
	return out, nil
}

// epoch is the modification time of every archive entry.
var epoch = time.Unix(0, 0).UTC()

// tarSize is the size of the tar packTar writes: a 512-byte header per
// entry (every name fits a ustar header), contents padded to 512 bytes,
// two zero blocks at the end.
func tarSize(blobs []packBlob, files []packFile) int64 {
	const block = 512
	pad := func(n int64) int64 { return (n + block - 1) / block * block }
	total := int64(2*block) + 2*block // the two directories, the end
	for _, b := range blobs {
		total += block + pad(b.desc.Size)
	}
	for _, f := range files {
		total += block + pad(int64(len(f.data)))
	}
	return total
}

// packTar writes the tar: blobs/, blobs/sha256/, the blobs, then the
// top-level files, in that (sorted) order, each blob hashed again as it is
// read.
func packTar(ctx context.Context, w io.Writer, blobs []packBlob, files []packFile, counted func(n int64, blob int)) error {
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
	for i, b := range blobs {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := b.desc
		rc, err := b.open()
		if err != nil {
			return fmt.Errorf("blob %s: %w", d.Digest, err)
		}
		h := sha256.New()
		err = file("blobs/sha256/"+d.Digest.Hex, d.Size)
		var n int64
		if err == nil {
			n, err = io.CopyBuffer(io.MultiWriter(tw, h, countWriter(func(m int) { counted(int64(m), i) })), io.LimitReader(rc, d.Size), *bp)
		}
		rc.Close()
		if err != nil {
			return err
		}
		if n != d.Size {
			return fmt.Errorf("blob %s: %w: got %d bytes, want %d", d.Digest, ErrDigestMismatch, n, d.Size)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != d.Digest.Hex {
			return fmt.Errorf("blob %s: %w: got sha256:%s", d.Digest, ErrDigestMismatch, got)
		}
	}
	for _, f := range files {
		if err := file(f.name, int64(len(f.data))); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

type countWriter func(int)

func (c countWriter) Write(p []byte) (int, error) {
	c(len(p))
	return len(p), nil
}

// packDirect writes an archive straight from a layout source: the images'
// manifests (read and verified already) and blobs (hashed on the way),
// with no staging layout. Nothing is written unless every image was read.
func (m *mirrorer) packDirect(ctx context.Context, images []*image, errs []error) (*Summary, error) {
	if err := failures(images, errs); err != nil {
		return nil, err
	}
	p := m.opts.Progress
	m.startProgress(images, m.skip)
	tasks, _ := blobTasks(images, m.skip)
	byDigest := map[v1.Hash]int{} // -> task, or -1 for a manifest
	var entries []packBlob
	var users [][]int
	for _, t := range tasks {
		byDigest[t.desc.Digest] = len(entries)
		entries = append(entries, packBlob{desc: t.desc, open: func() (io.ReadCloser, error) { return m.src.openBlob(ctx, t.from, t.desc) }})
		users = append(users, t.images)
	}
	var ok []*image
	seen := map[string]bool{}
	idx := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex}
	for _, im := range images {
		for _, mb := range im.Manifests {
			if _, dup := byDigest[mb.Digest]; dup {
				continue
			}
			byDigest[mb.Digest] = len(entries)
			entries = append(entries, packBlob{desc: v1.Descriptor{Digest: mb.Digest, Size: int64(len(mb.Data))}, open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(mb.Data)), nil }})
			users = append(users, nil)
		}
		if !seen[im.Ref] {
			seen[im.Ref] = true
			idx.Manifests = append(idx.Manifests, indexEntry(im))
		}
		ok = append(ok, im)
	}
	sort.Slice(idx.Manifests, func(i, j int) bool {
		return idx.Manifests[i].Annotations[AnnotationRefName] < idx.Manifests[j].Annotations[AnnotationRefName]
	})
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return entries[order[i]].desc.Digest.Hex < entries[order[j]].desc.Digest.Hex })
	sorted := make([]packBlob, len(entries))
	sortedUsers := make([][]int, len(entries))
	for i, j := range order {
		sorted[i], sortedUsers[i] = entries[j], users[j]
	}
	index, err := encodeIndex(&idx)
	if err != nil {
		return nil, err
	}
	files := []packFile{{name: indexFile, data: index}}
	if m.bundleOut != nil {
		files = append(files, packFile{name: BundleFile, data: m.bundleOut})
	}
	files = append(files, packFile{name: layoutFile, data: []byte(layoutVersion)})
	if err := os.MkdirAll(filepath.Dir(m.to.Path), 0o755); err != nil {
		return nil, fmt.Errorf("creating the directory of %s: %w", m.to, err)
	}
	if err := removeStaleTemps(m.to.Path); err != nil {
		return nil, err
	}
	sum := &Summary{}
	var mu sync.Mutex
	res, err := writeArchive(ctx, m.to.Path, m.opts.PartSize, m.opts.Sign, sorted, files, func(n int64, blob int) {
		if u := sortedUsers[blob]; u != nil {
			mu.Lock()
			sum.Fetched += n
			mu.Unlock()
			p.Add(n, u)
		}
	})
	for i := range images {
		p.Done(i, err)
	}
	if err != nil {
		return nil, err
	}
	sum.ArchiveBytes, sum.Parts, sum.PartsWritten = res.Bytes, res.Parts, res.Written
	sum.count(ok, m.leftOut())
	return sum, nil
}
