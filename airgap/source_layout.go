package airgap

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

// ErrNotInLayout is wrapped when an image the plan needs is not named in
// the layout a mirror reads from.
var ErrNotInLayout = errors.New("not in the image layout")

// blobStore is the content of an OCI image layout: a directory, or a tar
// archive of one (what skopeo's oci-archive: transport reads and writes).
type blobStore interface {
	// open streams a blob; an absent one is an error wrapping errMissing.
	open(d v1.Hash) (io.ReadCloser, int64, error)
	// readFile reads a top-level file (index.json, oci-layout), at most
	// limit bytes.
	readFile(name string, limit int64) ([]byte, error)
	close() error
}

// layoutSource reads images from an OCI image layout, by the names
// index.json gives them (org.opencontainers.image.ref.name, the reference
// as the plan writes it: what mirror --to oci: and oci-archive: write).
type layoutSource struct {
	desc   string // oci:DIR or oci-archive:FILE, for messages
	store  blobStore
	reg    registryclient.Options
	byName map[string]v1.Descriptor
	// entries are index.json's, as they are.
	entries []v1.Descriptor
	// indexDigest is the sha256 of index.json: what a bundle records of a
	// layout it was made against.
	indexDigest v1.Hash
	// bundle is the layout's BundleFile, when it is a differential
	// bundle; bundleData its bytes.
	bundle     *Bundle
	bundleData []byte
}

var _ source = (*layoutSource)(nil)

// maxIndexFile bounds index.json: one entry per image is a few hundred bytes.
const maxIndexFile = 16 << 20

// openLayoutSource opens a layout to read its images by name: every
// index.json entry must name one (see readIndex), and a differential
// bundle's file must agree with index.json.
func openLayoutSource(from Target, reg registryclient.Options) (*layoutSource, error) {
	s, err := openLayoutStore(from, reg)
	if err != nil {
		return nil, err
	}
	if err := s.readIndex(s.entries); err != nil {
		s.close()
		return nil, fmt.Errorf("reading %s of %s: %w", indexFile, from, err)
	}
	if s.bundle != nil {
		if err := s.bundle.matchIndex(s.byName); err != nil {
			s.close()
			return nil, fmt.Errorf("reading %s of %s: %w", BundleFile, from, err)
		}
	}
	return s, nil
}

// openLayoutStore opens a layout (a directory, an archive or a split
// archive) and reads its index.json and, if it has one, its BundleFile.
func openLayoutStore(from Target, reg registryclient.Options) (*layoutSource, error) {
	var store blobStore
	var err error
	if from.Transport == TransportOCI {
		// oci:FILE: an archive, as skopeo's oci: would not take it.
		if st, serr := os.Stat(from.Path); serr == nil && st.Mode().IsRegular() {
			from.Transport = TransportArchive
		} else if _, ok, _ := splitFile(from.Path); ok {
			from.Transport = TransportArchive
		}
	}
	switch from.Transport {
	case TransportOCI:
		store, err = openDirStore(from.Path)
	case TransportArchive:
		store, err = openArchiveStore(from.Path)
	default:
		return nil, fmt.Errorf("%w %q: mirror reads from oci:DIR or oci-archive:FILE", ErrBadDestination, from)
	}
	if err != nil {
		return nil, err
	}
	return newLayoutSource(from.String(), store, reg)
}

// newLayoutSource reads a layout's oci-layout, index.json and, if it has
// one, its BundleFile out of store (closed on failure); desc names it.
func newLayoutSource(desc string, store blobStore, reg registryclient.Options) (*layoutSource, error) {
	from := desc
	s := &layoutSource{desc: desc, store: store, reg: reg, byName: map[string]v1.Descriptor{}}
	ldata, err := store.readFile(layoutFile, maxLayoutFile)
	if errors.Is(err, fs.ErrNotExist) {
		store.close()
		return nil, fmt.Errorf("%s: %w (no %s in it)", from, ErrNotLayout, layoutFile)
	}
	if err == nil {
		err = checkLayoutVersion(ldata)
	}
	if err != nil {
		store.close()
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	data, err := store.readFile(indexFile, maxIndexFile)
	if err != nil {
		store.close()
		return nil, fmt.Errorf("reading %s of %s: %w", indexFile, from, err)
	}
	idx, err := v1.ParseIndexManifest(bytes.NewReader(data))
	if err != nil {
		store.close()
		return nil, fmt.Errorf("reading %s of %s: %w", indexFile, from, err)
	}
	s.entries = idx.Manifests
	s.indexDigest, _, _ = v1.SHA256(bytes.NewReader(data))
	bdata, err := store.readFile(BundleFile, maxBundleFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		store.close()
		return nil, fmt.Errorf("reading %s of %s: %w", BundleFile, from, err)
	default:
		if s.bundle, err = ParseBundle(BundleFile+" of "+from, bdata); err != nil {
			store.close()
			return nil, err
		}
		s.bundleData = bdata
	}
	return s, nil
}

// readIndex takes the layout's images by name. Every entry must name one
// image by a full reference, once: an entry without a name, with a name
// that is not a reference (a newline, "../", no registry) or with a name
// another entry has is refused, naming the entry, rather than skipped or
// overwritten (mirror would copy less than the layout holds and say so
// nowhere).
func (s *layoutSource) readIndex(entries []v1.Descriptor) error {
	first := map[string]int{}
	for i, d := range entries {
		entry := fmt.Sprintf("entry %d (%s)", i+1, d.Digest)
		n := d.Annotations[AnnotationRefName]
		if n == "" {
			return fmt.Errorf("%s has no %s annotation: mirror reads a layout's images by the full references it names", entry, AnnotationRefName)
		}
		if !validReference(s.reg, n) {
			if len(n) > 256 {
				n = n[:256] + "..."
			}
			return fmt.Errorf("%s: %s %q is not a full image reference", entry, AnnotationRefName, n)
		}
		if j, dup := first[n]; dup {
			return fmt.Errorf("entries %d and %d both name %s", j+1, i+1, n)
		}
		first[n] = i
		s.byName[n] = d
	}
	return nil
}

// names are the images the layout names, sorted.
func (s *layoutSource) names() []string {
	out := slices.Collect(maps.Keys(s.byName))
	slices.Sort(out)
	return out
}

func (s *layoutSource) close() error { return s.store.close() }

func (s *layoutSource) top(_ context.Context, ref string) (*image, error) {
	d, ok := s.byName[ref]
	if !ok {
		return nil, fmt.Errorf("%s: %w %s (mirror it there first)", ref, ErrNotInLayout, s.desc)
	}
	parsed, err := s.reg.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("%s: the name in %s is not a full image reference: %w", ref, s.desc, err)
	}
	m, err := s.manifest(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return &image{Ref: ref, ref: parsed, Top: m}, nil
}

func (s *layoutSource) child(_ context.Context, _ *image, d v1.Descriptor) (manifestBlob, error) {
	return s.manifest(d)
}

// manifest reads and verifies the manifest d describes.
func (s *layoutSource) manifest(d v1.Descriptor) (manifestBlob, error) {
	if d.Size > registryclient.MaxMetadataSize {
		return manifestBlob{}, fmt.Errorf("manifest %s: %w: %d bytes", d.Digest, registryclient.ErrTooLarge, d.Size)
	}
	rc, size, err := s.store.open(d.Digest)
	if err != nil {
		return manifestBlob{}, err
	}
	defer rc.Close()
	if size != d.Size {
		return manifestBlob{}, fmt.Errorf("manifest %s: %w: %d bytes in %s, the descriptor says %d", d.Digest, ErrDigestMismatch, size, s.desc, d.Size)
	}
	data, err := io.ReadAll(io.LimitReader(rc, d.Size+1))
	if err != nil {
		return manifestBlob{}, fmt.Errorf("reading manifest %s: %w", d.Digest, err)
	}
	if err := verifyManifest(data, d.Digest); err != nil {
		return manifestBlob{}, err
	}
	return manifestBlob{Digest: d.Digest, MediaType: d.MediaType, Data: data}, nil
}

func (s *layoutSource) openBlob(_ context.Context, _ *image, d v1.Descriptor) (io.ReadCloser, error) {
	rc, size, err := s.store.open(d.Digest)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", d.Digest, err)
	}
	if size != d.Size {
		rc.Close()
		return nil, fmt.Errorf("blob %s: %w: %d bytes in %s, the manifest says %d", d.Digest, ErrDigestMismatch, size, s.desc, d.Size)
	}
	return rc, nil
}

// dirStore is a layout directory, read through the input gate: a blob or
// index that is a named pipe or device is refused without blocking, and a
// symlink out of the layout is refused rather than followed. Blobs are
// opened through an os.Root of their own (the gate's files stop at its
// 32 MiB limit; a layer may be gigabytes, bounded by its descriptor).
type dirStore struct {
	dir  string
	fsys fs.FS
	root *os.Root
}

func openDirStore(dir string) (*dirStore, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("opening oci:%s: %w", dir, unwrapPath(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("oci:%s: not a directory (an archive is oci-archive:FILE)", dir)
	}
	fsys, err := inputfile.Dir(dir)
	if err != nil {
		return nil, fmt.Errorf("opening oci:%s: %w", dir, unwrapPath(err))
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening oci:%s: %w", dir, unwrapPath(err))
	}
	return &dirStore{dir: dir, fsys: fsys, root: root}, nil
}

func (s *dirStore) open(d v1.Hash) (io.ReadCloser, int64, error) {
	f, err := s.root.OpenFile(path.Join("blobs", d.Algorithm, d.Hex), os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("%s: %w", d, errMissing)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", d, unwrapPath(err))
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file in the layout", d)
	}
	return f, st.Size(), nil
}

func (s *dirStore) readFile(name string, limit int64) ([]byte, error) {
	data, err := inputfile.ReadFS(s.fsys, name, limit)
	if err != nil {
		return nil, unwrapPath(err)
	}
	return data, nil
}

func (s *dirStore) close() error { return s.root.Close() }

// archiveStore reads an OCI layout archived in an uncompressed tar without
// unpacking it: one pass over the headers (seeking past file contents)
// records where each file is, and blobs are read in place.
type archiveStore struct {
	r     io.ReaderAt
	c     io.Closer
	files map[string]archiveEntry
	// parts is the list of a split archive (nil for one file).
	parts *PartSet
}

type archiveEntry struct{ offset, size int64 }

// maxArchiveEntries bounds the archive's table of contents.
const maxArchiveEntries = 1 << 20

// openArchiveStore opens an archive: one file, or a split archive (its
// set name, its list or its first part), every part verified first.
func openArchiveStore(file string) (*archiveStore, error) {
	base, split, err := splitFile(file)
	if err != nil {
		return nil, err
	}
	if split {
		pr, err := openParts(base)
		if err != nil {
			return nil, err
		}
		files, err := scanArchive(io.NewSectionReader(pr, 0, pr.Size()))
		if err != nil {
			pr.Close()
			return nil, fmt.Errorf("reading oci-archive:%s: %w", base, err)
		}
		return &archiveStore{r: pr, c: pr, files: files, parts: pr.set}, nil
	}
	// Never blocks on a named pipe; only a regular file is read.
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening oci-archive:%s: %w", file, unwrapPath(err))
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("opening oci-archive:%s: not a regular file", file)
	}
	files, err := scanArchive(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading oci-archive:%s: %w", file, err)
	}
	return &archiveStore{r: f, c: f, files: files}, nil
}

// maxArchiveName bounds what one tar header may name: its name, link name
// and each PAX record. A layout's paths are short (blobs/sha512/ and 128
// hex digits is the longest), so a longer one is no layout path and the
// archive is refused at that header, before it is held with others: an
// archive of many ~1 MB PAX names is refused at its first.
const maxArchiveName = 4096

// maxLayoutPath is the longest name kept in an archive's table: the
// names of a layout (oci-layout, index.json, BundleFile, blobs/ALG/HEX).
// Other files are passed over, not held.
const maxLayoutPath = 256

// scanArchive lists the layout files of a tar (oci-layout, index.json,
// BundleFile and blobs/ALG/HEX): cleaned name -> where its content is.
// Other regular files are passed over; a header naming more than any
// layout path could is refused as it is read.
func scanArchive(r io.ReadSeeker) (map[string]archiveEntry, error) {
	pr := &posReader{r: r}
	tr := tar.NewReader(pr)
	files := map[string]archiveEntry{}
	for n := 1; ; n++ {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			if n == 1 {
				return nil, fmt.Errorf("not a tar archive: %w", err)
			}
			return nil, fmt.Errorf("entry %d: %w", n, err)
		}
		if err := checkArchiveHeader(h); err != nil {
			return nil, fmt.Errorf("entry %d: %w", n, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if n > maxArchiveEntries {
			return nil, fmt.Errorf("more than %d files", maxArchiveEntries)
		}
		name := path.Clean("/" + h.Name)[1:]
		if isLayoutPath(name) {
			files[name] = archiveEntry{offset: pr.pos, size: h.Size}
		}
	}
}

// checkArchiveHeader refuses a header that names more than a layout path
// can be (see maxArchiveName).
func checkArchiveHeader(h *tar.Header) error {
	long := func(what, s string) error {
		return fmt.Errorf("%w: its %s is %d bytes, longer than any path of an OCI layout (%d at most)", ErrNotArchive, what, len(s), maxArchiveName)
	}
	if len(h.Name) > maxArchiveName {
		return long("name", h.Name)
	}
	if len(h.Linkname) > maxArchiveName {
		return long("link name", h.Linkname)
	}
	for k, v := range h.PAXRecords {
		if len(k)+len(v) > maxArchiveName {
			return long(fmt.Sprintf("PAX record %.32q", k), k+v)
		}
	}
	return nil
}

// isLayoutPath reports whether name (cleaned) is a file an OCI layout
// has: oci-layout, index.json, BundleFile, or blobs/ALG/ENCODED.
func isLayoutPath(name string) bool {
	switch name {
	case layoutFile, indexFile, BundleFile:
		return true
	}
	if len(name) > maxLayoutPath {
		return false
	}
	rest, ok := strings.CutPrefix(name, "blobs/")
	if !ok {
		return false
	}
	alg, enc, ok := strings.Cut(rest, "/")
	return ok && alg != "" && enc != "" && !strings.Contains(enc, "/")
}

// posReader tracks the offset of an io.ReadSeeker that archive/tar reads
// (and seeks past file contents in).
type posReader struct {
	r   io.ReadSeeker
	pos int64
}

func (p *posReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.pos += int64(n)
	return n, err
}

func (p *posReader) Seek(offset int64, whence int) (int64, error) {
	n, err := p.r.Seek(offset, whence)
	if err == nil {
		p.pos = n
	}
	return n, err
}

func (s *archiveStore) entry(name string) (archiveEntry, bool) {
	e, ok := s.files[name]
	return e, ok
}

func (s *archiveStore) open(d v1.Hash) (io.ReadCloser, int64, error) {
	e, ok := s.entry(path.Join("blobs", d.Algorithm, d.Hex))
	if !ok {
		return nil, 0, fmt.Errorf("%s: %w", d, errMissing)
	}
	return io.NopCloser(io.NewSectionReader(s.r, e.offset, e.size)), e.size, nil
}

func (s *archiveStore) readFile(name string, limit int64) ([]byte, error) {
	e, ok := s.entry(name)
	if !ok {
		return nil, fs.ErrNotExist
	}
	return readAtMost(io.NewSectionReader(s.r, e.offset, e.size), limit)
}

func (s *archiveStore) close() error { return s.c.Close() }

// ErrNotArchive is wrapped when --to oci-archive:FILE names an existing
// file that is not an OCI image archive.
var ErrNotArchive = errors.New("not an OCI image archive")
