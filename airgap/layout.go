package airgap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Annotations on each index.json entry. skopeo, podman and buildah find an
// image of a layout by org.opencontainers.image.ref.name (oci:DIR:NAME);
// containerd and nerdctl import it under io.containerd.image.name. Both
// carry the reference exactly as the plan writes it.
const (
	AnnotationRefName        = "org.opencontainers.image.ref.name"
	AnnotationContainerdName = "io.containerd.image.name"
)

// ErrNotLayout is wrapped when --to oci:DIR names a directory that holds
// other things than an OCI image layout.
var ErrNotLayout = errors.New("not an OCI image layout")

const (
	layoutFile    = "oci-layout"
	indexFile     = "index.json"
	layoutVersion = `{"imageLayoutVersion":"1.0.0"}`
	// partialMark names blobs being written: .<hex>.partial-<random>. A
	// killed run leaves them behind; the next run removes them.
	partialMark = ".partial-"
)

// copyBufferSize is the buffer per concurrent blob copy: big enough that a
// copy is a few syscalls per MiB, small enough that --jobs of them stay far
// below the 100 MB the whole mirror may use.
const copyBufferSize = 1 << 20

var bufPool = sync.Pool{New: func() any { b := make([]byte, copyBufferSize); return &b }}

// layout is an OCI image layout being written. Blobs are written to a
// hidden temporary file, hashed as they stream, and renamed into
// blobs/sha256/<hex> only when their size and digest match: a blob under its
// final name is complete, and a partial one from a killed run is never
// mistaken for one. Blobs already present are re-hashed before they are
// trusted. The layout's oci-layout file is flock'ed while a mirror writes.
type layout struct {
	dir   string
	blobs string
	lock  *os.File
	// index is index.json as it was, entries of other images kept.
	index *v1.IndexManifest

	mu       sync.Mutex
	verified map[v1.Hash]bool
	// created are the blobs this run wrote, for undoCreated.
	created []v1.Hash
}

// maxLayoutFile bounds the oci-layout file: one short JSON object.
const maxLayoutFile = 4096

// ErrLayoutVersion is wrapped when a layout's oci-layout file is not
// {"imageLayoutVersion": "1.0.0"}: the only version of the image-layout
// spec, whose rules every reader and writer here follows.
var ErrLayoutVersion = errors.New("not an OCI image layout of version 1.0.0")

// checkLayoutVersion checks an oci-layout file's content: a JSON object
// whose imageLayoutVersion is "1.0.0" (other fields are the spec's to add
// and are let through).
func checkLayoutVersion(data []byte) error {
	var f struct {
		Version *string `json:"imageLayoutVersion"`
	}
	if len(data) > maxLayoutFile {
		return fmt.Errorf("%w: its %s is larger than %d bytes", ErrLayoutVersion, layoutFile, maxLayoutFile)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("%w: its %s is not a JSON object (%v)", ErrLayoutVersion, layoutFile, err)
	}
	switch {
	case f.Version == nil:
		return fmt.Errorf("%w: its %s has no imageLayoutVersion", ErrLayoutVersion, layoutFile)
	case *f.Version != "1.0.0":
		v := *f.Version
		if len(v) > 64 {
			v = v[:64] + "..."
		}
		return fmt.Errorf("%w: its %s says imageLayoutVersion %q, which this version does not read", ErrLayoutVersion, layoutFile, v)
	}
	return nil
}

func openLayout(dir string) (*layout, error) {
	if err := checkLayoutDir(dir); err != nil {
		return nil, err
	}
	l := &layout{dir: dir, blobs: filepath.Join(dir, "blobs", "sha256"), verified: map[v1.Hash]bool{}}
	if err := os.MkdirAll(l.blobs, 0o755); err != nil {
		return nil, fmt.Errorf("creating OCI layout %s: %w", dir, err)
	}
	lf := filepath.Join(dir, layoutFile)
	if _, err := os.Stat(lf); errors.Is(err, os.ErrNotExist) {
		if err := writeFileAtomic(lf, []byte(layoutVersion)); err != nil {
			return nil, fmt.Errorf("creating OCI layout %s: %w", dir, err)
		}
	}
	f, err := os.Open(lf)
	if err != nil {
		return nil, fmt.Errorf("opening OCI layout %s: %w", dir, err)
	}
	if data, err := readAtMost(f, maxLayoutFile); err != nil || checkLayoutVersion(data) != nil {
		f.Close()
		if err == nil {
			err = checkLayoutVersion(data)
		}
		return nil, fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	ok, err := tryLock(f)
	if err != nil || !ok {
		f.Close()
		if err == nil {
			err = errors.New("another mirror is writing it")
		}
		return nil, fmt.Errorf("locking OCI layout %s: %w", dir, err)
	}
	l.lock = f
	if l.index, err = readIndex(filepath.Join(dir, indexFile)); err != nil {
		l.close()
		return nil, err
	}
	if err := l.removePartials(); err != nil {
		l.close()
		return nil, err
	}
	if err := l.removePartialViews(); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

// checkLayoutDir refuses a non-empty directory that is not an OCI layout:
// mirror must not scatter blobs into someone's project directory.
func checkLayoutDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking OCI layout %s: %w", dir, err)
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, layoutFile)); err != nil {
		return fmt.Errorf("oci:%s: %w (it has files but no %s); choose an empty or new directory", dir, ErrNotLayout, layoutFile)
	}
	return nil
}

func readIndex(path string) (*v1.IndexManifest, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	idx, err := v1.ParseIndexManifest(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return idx, nil
}

func (l *layout) close() {
	if l.lock != nil {
		l.lock.Close()
		l.lock = nil
	}
}

func (l *layout) removePartials() error {
	entries, err := os.ReadDir(l.blobs)
	if err != nil {
		return fmt.Errorf("reading %s: %w", l.blobs, err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), partialMark) {
			if err := os.Remove(filepath.Join(l.blobs, e.Name())); err != nil {
				return fmt.Errorf("removing a partial blob of an earlier run: %w", err)
			}
		}
	}
	return nil
}

func (l *layout) path(d v1.Hash) string { return filepath.Join(l.blobs, d.Hex) }

// has reports whether the blob is present and verified: the right size and
// its digest re-computed. A present blob that fails either is removed.
func (l *layout) has(d v1.Descriptor) (bool, error) {
	l.mu.Lock()
	ok := l.verified[d.Digest]
	l.mu.Unlock()
	if ok {
		return true, nil
	}
	p := l.path(d.Digest)
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("checking blob %s: %w", d.Digest, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("checking blob %s: %w", d.Digest, err)
	}
	good := st.Mode().IsRegular() && st.Size() == d.Size
	if good {
		h := sha256.New()
		bp := bufPool.Get().(*[]byte)
		_, err = io.CopyBuffer(h, f, *bp)
		bufPool.Put(bp)
		if err != nil {
			return false, fmt.Errorf("checking blob %s: %w", d.Digest, err)
		}
		good = hex.EncodeToString(h.Sum(nil)) == d.Digest.Hex
	}
	if !good {
		// Not what its name says (a truncated write, a disk error, another
		// tool): fetch it again.
		if err := os.Remove(p); err != nil {
			return false, fmt.Errorf("removing damaged blob %s: %w", d.Digest, err)
		}
		return false, nil
	}
	l.markVerified(d.Digest)
	return true, nil
}

func (l *layout) markVerified(d v1.Hash) {
	l.mu.Lock()
	l.verified[d] = true
	l.mu.Unlock()
}

// write streams r into the blob d: to a temporary file, hashed on the way,
// renamed into place only when size and digest match. Anything else removes
// the temporary file. counted is told every chunk written, so progress can
// follow (and be taken back when an attempt fails).
func (l *layout) write(ctx context.Context, d v1.Descriptor, r io.Reader, counted func(int64)) (err error) {
	f, err := os.CreateTemp(l.blobs, "."+d.Digest.Hex+partialMark)
	if err != nil {
		return fmt.Errorf("writing blob %s: %w", d.Digest, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	h := sha256.New()
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, rerr := r.Read(buf)
		if m > 0 {
			if n+int64(m) > d.Size {
				return fmt.Errorf("blob %s: %w: more than the %d bytes its descriptor gives", d.Digest, ErrDigestMismatch, d.Size)
			}
			h.Write(buf[:m])
			if _, err := f.Write(buf[:m]); err != nil {
				return fmt.Errorf("writing blob %s: %w", d.Digest, err)
			}
			n += int64(m)
			counted(int64(m))
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if n == d.Size {
				// Every byte arrived and the reader still objects: the
				// digest check below names the problem better.
				break
			}
			return rerr
		}
	}
	if n != d.Size {
		return fmt.Errorf("blob %s: %w: got %d bytes, want %d", d.Digest, ErrDigestMismatch, n, d.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != d.Digest.Hex {
		return fmt.Errorf("blob %s: %w: got sha256:%s", d.Digest, ErrDigestMismatch, got)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("writing blob %s: %w", d.Digest, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing blob %s: %w", d.Digest, err)
	}
	if err := os.Rename(f.Name(), l.path(d.Digest)); err != nil {
		return fmt.Errorf("writing blob %s: %w", d.Digest, err)
	}
	l.mu.Lock()
	l.verified[d.Digest] = true
	l.created = append(l.created, d.Digest)
	l.mu.Unlock()
	return nil
}

// undoCreated removes the blobs this run wrote: what a run that must
// change all or nothing (a bundle applied) leaves when it changes nothing.
func (l *layout) undoCreated() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.created {
		if err := os.Remove(l.path(d)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing blob %s: %w", d, err)
		}
		delete(l.verified, d)
	}
	l.created = nil
	return nil
}

// writeManifest stores a manifest read from a registry (its digest was
// checked when it was read, and is checked again here).
func (l *layout) writeManifest(ctx context.Context, m manifestBlob) error {
	d := v1.Descriptor{Digest: m.Digest, Size: int64(len(m.Data)), MediaType: m.MediaType}
	if ok, err := l.has(d); err != nil || ok {
		return err
	}
	return l.write(ctx, d, bytes.NewReader(m.Data), func(int64) {})
}

// setIndex writes index.json: the existing entries for other names kept
// (unless replace), one entry per mirrored image, sorted by name, written
// atomically.
func (l *layout) setIndex(images []*image, replace bool) error {
	byName := map[string]v1.Descriptor{}
	var keep []v1.Descriptor
	for _, d := range l.index.Manifests {
		if replace {
			break
		}
		if n, ok := d.Annotations[AnnotationRefName]; ok {
			byName[n] = d
		} else {
			keep = append(keep, d)
		}
	}
	for _, im := range images {
		byName[im.Ref] = indexEntry(im)
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	idx := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: append([]v1.Descriptor{}, keep...)}
	for _, n := range names {
		idx.Manifests = append(idx.Manifests, byName[n])
	}
	data, err := encodeIndex(&idx)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(l.dir, indexFile), data); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(l.dir, indexFile), err)
	}
	l.index = &idx
	return nil
}

// indexEntry is the index.json entry of a mirrored image.
func indexEntry(im *image) v1.Descriptor {
	return v1.Descriptor{
		MediaType:    im.Top.MediaType,
		Size:         int64(len(im.Top.Data)),
		Digest:       im.Top.Digest,
		ArtifactType: im.ArtifactType,
		Annotations: map[string]string{
			AnnotationRefName:        im.Ref,
			AnnotationContainerdName: im.Ref,
		},
	}
}

// encodeIndex is index.json's bytes.
func encodeIndex(idx *v1.IndexManifest) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(idx); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", indexFile, err)
	}
	return b.Bytes(), nil
}

// writeTopFile writes a file beside index.json, atomically.
func (l *layout) writeTopFile(name string, data []byte) error {
	if err := writeFileAtomic(filepath.Join(l.dir, name), data); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(l.dir, name), err)
	}
	return nil
}

// writeFileAtomic writes data to a temporary file beside path and renames it.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+partialMark)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
