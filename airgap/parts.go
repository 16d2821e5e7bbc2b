package airgap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
)

// A split archive (mirror --max-size) is the bytes of one oci-archive tar
// cut into parts FILE.001, FILE.002, … of at most the given size each, and
// FILE.parts.json, which lists them in order with their sizes and sha256
// and the total size. The parts are plain byte ranges: `cat FILE.0*` (the
// names sort in order) gives back the single archive byte for byte, which
// skopeo reads; mirror --from reads the parts in place. The list is
// written last, so a set without it is incomplete.
const (
	// PartsSuffix names the list of a split archive: FILE.parts.json.
	PartsSuffix  = ".parts.json"
	partsSchema  = "microshift-compose/archive-parts/v1"
	maxPartsFile = 1 << 20
	// MaxParts bounds a split archive: part names have three digits.
	MaxParts = 999
)

// ErrBadParts is wrapped when a split archive's parts do not match its
// list: a part missing, truncated, corrupt or out of order, or a list
// that is not one.
var ErrBadParts = errors.New("invalid split archive")

// PartSet is FILE.parts.json.
type PartSet struct {
	Schema string `json:"schema"`
	// Archive is the base name of the single archive the parts join into.
	Archive string `json:"archive"`
	// Size is the total size, the sum of the parts'.
	Size int64 `json:"size"`
	// PartSize is the size of every part but the last, which is at most
	// that.
	PartSize int64  `json:"part_size"`
	Parts    []Part `json:"parts"`
}

// Part is one part of a split archive, in order.
type Part struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// PartName is the name of part i (from 1) of the split archive FILE.
func PartName(file string, i int) string { return fmt.Sprintf("%s.%03d", file, i) }

var partNumber = lazyregexp.New(`\.([0-9]{3})$`)

// ParsePartSet decodes and checks the list of the split archive file (the
// path of the set, without the suffix): strictly (an unknown field is an
// error), the parts named FILE.001 onward in order, every size consistent
// with the part size and the total.
func ParsePartSet(display, file string, data []byte) (*PartSet, error) {
	bad := func(format string, args ...any) (*PartSet, error) {
		return nil, fmt.Errorf("%s: %w: %s", display, ErrBadParts, fmt.Sprintf(format, args...))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s PartSet
	if err := dec.Decode(&s); err != nil {
		return bad("%v", err)
	}
	if dec.More() {
		return bad("more than one JSON value")
	}
	if s.Schema != partsSchema {
		return bad("schema %q, want %q", s.Schema, partsSchema)
	}
	if base := filepath.Base(file); s.Archive != base {
		return bad("it lists the parts of %q, not of %q", s.Archive, base)
	}
	if len(s.Parts) == 0 || len(s.Parts) > MaxParts {
		return bad("%d parts (want 1 to %d)", len(s.Parts), MaxParts)
	}
	if s.PartSize <= 0 {
		return bad("part_size %d is not positive", s.PartSize)
	}
	var total int64
	for i, p := range s.Parts {
		want := filepath.Base(PartName(file, i+1))
		if p.Name != want {
			return bad("part %d is named %q, want %q", i+1, p.Name, want)
		}
		last := i == len(s.Parts)-1
		if p.Size <= 0 || p.Size > s.PartSize || (!last && p.Size != s.PartSize) {
			return bad("part %d (%s) has size %d; every part but the last has the part size %d", i+1, p.Name, p.Size, s.PartSize)
		}
		if !hexDigest.MatchString(p.SHA256) {
			return bad("part %d (%s) has sha256 %q, not 64 lowercase hex digits", i+1, p.Name, p.SHA256)
		}
		total += p.Size
	}
	if total != s.Size {
		return bad("the parts add up to %d bytes, the set says %d", total, s.Size)
	}
	return &s, nil
}

// splitFile reports whether path names a split archive, and which: the
// set's name FILE (absent, with FILE.parts.json beside it), FILE.parts.json
// itself, or its first part FILE.001. A later part, or a part whose list
// is missing, is an error.
func splitFile(path string) (file string, ok bool, err error) {
	if f, cut := strings.CutSuffix(path, PartsSuffix); cut {
		return f, true, nil
	}
	if m := partNumber.FindStringSubmatch(path); m != nil {
		f := strings.TrimSuffix(path, m[0])
		n, _ := strconv.Atoi(m[1])
		if _, err := os.Lstat(f + PartsSuffix); err != nil {
			if _, serr := os.Stat(path); serr != nil {
				return "", false, nil // not there at all: the caller says so
			}
			if errors.Is(err, fs.ErrNotExist) {
				if _, terr := os.Stat(PartName(f, 2)); terr == nil {
					return "", false, fmt.Errorf("oci-archive:%s: %w: it is part %d of a split archive whose list %s is missing (carry it with the parts)", path, ErrBadParts, n, filepath.Base(f+PartsSuffix))
				}
			}
			return "", false, nil // FILE.123 that is an archive of its own
		}
		if n != 1 {
			return "", false, fmt.Errorf("oci-archive:%s: it is part %d of the split archive %s: name its first part (%s) or the set (%s)", path, n, f, filepath.Base(PartName(f, 1)), filepath.Base(f))
		}
		return f, true, nil
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Lstat(path + PartsSuffix); err == nil {
			return path, true, nil
		}
	}
	return "", false, nil
}

// partsReader reads a verified split archive as one file.
type partsReader struct {
	set   *PartSet
	files []*os.File
}

// openParts reads FILE.parts.json and checks every part against it before
// anything is read from them: present, a regular file, the listed size and
// sha256, in order. A failure names the part and what is wrong with it.
func openParts(file string) (*partsReader, error) {
	list := file + PartsSuffix
	data, err := inputfile.Read("split archive list", list, maxPartsFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("oci-archive:%s: %w: its list %s is missing", file, ErrBadParts, list)
		}
		return nil, err
	}
	set, err := ParsePartSet(list, file, data)
	if err != nil {
		return nil, err
	}
	r := &partsReader{set: set, files: make([]*os.File, len(set.Parts))}
	ok := false
	defer func() {
		if !ok {
			r.Close()
		}
	}()
	n := len(set.Parts)
	got := make([]string, n)
	sizes := make([]int64, n)
	errs := make([]error, n)
	var g errgroup.Group
	g.SetLimit(2)
	for i, p := range set.Parts {
		path := filepath.Join(filepath.Dir(file), p.Name)
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != nil {
			errs[i] = err
			continue
		}
		r.files[i] = f
		st, err := f.Stat()
		if err != nil || !st.Mode().IsRegular() {
			errs[i] = errors.New("not a regular file")
			continue
		}
		sizes[i] = st.Size()
		g.Go(func() error {
			h := sha256.New()
			bp := bufPool.Get().(*[]byte)
			defer bufPool.Put(bp)
			if _, err := io.CopyBuffer(h, io.NewSectionReader(f, 0, st.Size()), *bp); err != nil {
				errs[i] = err
				return nil
			}
			got[i] = hex.EncodeToString(h.Sum(nil))
			return nil
		})
	}
	g.Wait()
	for i, p := range set.Parts {
		what := fmt.Sprintf("part %d of %d (%s)", i+1, n, p.Name)
		switch {
		case errors.Is(errs[i], fs.ErrNotExist):
			return nil, fmt.Errorf("oci-archive:%s: %w: %s is missing", file, ErrBadParts, what)
		case errs[i] != nil:
			return nil, fmt.Errorf("oci-archive:%s: %w: reading %s: %v", file, ErrBadParts, what, unwrapPath(errs[i]))
		case got[i] == p.SHA256 && sizes[i] == p.Size:
			continue
		}
		for j, o := range set.Parts {
			if j != i && got[i] == o.SHA256 {
				return nil, fmt.Errorf("oci-archive:%s: %w: %s holds what part %d (%s) should: the parts are out of order", file, ErrBadParts, what, j+1, o.Name)
			}
		}
		if sizes[i] < p.Size {
			return nil, fmt.Errorf("oci-archive:%s: %w: %s is truncated: %d bytes, the list says %d", file, ErrBadParts, what, sizes[i], p.Size)
		}
		return nil, fmt.Errorf("oci-archive:%s: %w: %s is corrupt: its sha256 is %s, the list says %s", file, ErrBadParts, what, got[i], p.SHA256)
	}
	ok = true
	return r, nil
}

func (r *partsReader) Size() int64 { return r.set.Size }

// ReadAt reads across parts: every part but the last has the part size.
func (r *partsReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	n := 0
	for len(p) > 0 {
		if off >= r.set.Size {
			return n, io.EOF
		}
		i := int(off / r.set.PartSize)
		within := off - int64(i)*r.set.PartSize
		chunk := p
		if rest := r.set.Parts[i].Size - within; int64(len(chunk)) > rest {
			chunk = chunk[:rest]
		}
		m, err := r.files[i].ReadAt(chunk, within)
		n += m
		off += int64(m)
		p = p[m:]
		if err != nil && !(err == io.EOF && m == len(chunk)) {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return n, err
		}
	}
	return n, nil
}

func (r *partsReader) Close() error {
	for _, f := range r.files {
		if f != nil {
			f.Close()
		}
	}
	return nil
}

// partWriter writes a byte stream as the parts of a split archive, each
// hashed as it streams. A part already on disk from an earlier run is
// compared with the stream instead of rewritten: only a part that differs
// or is missing is written (to a temporary file renamed into place when
// complete), so a rerun writes only what an interrupted run did not. The
// list is written by commit, last. Writes go to the disk on a goroutine of
// their own while the caller hashes the next bytes.
type partWriter struct {
	file     string
	partSize int64
	total    int64
	n        int

	i    int // the part being written, from 0
	cur  *partOut
	set  PartSet
	disk *diskWriter
	// sign, when set, signs the list (archive_signature.go).
	sign SignFunc
	// Written and Reused count parts written and parts found already right.
	Written, Reused int
}

// partOut is one part: compared with the file already there (cmp), then,
// from the first difference, written to a temporary file (tmp).
type partOut struct {
	name string
	h    hash.Hash
	size int64
	cmp  *os.File
	tmp  *os.File
	buf  []byte
}

// newPartWriter prepares the parts of an archive of total bytes.
func newPartWriter(file string, partSize, total int64) (*partWriter, error) {
	if partSize <= 0 {
		return nil, fmt.Errorf("part size %d is not positive", partSize)
	}
	n := int((total + partSize - 1) / partSize)
	if n == 0 {
		n = 1
	}
	if n > MaxParts {
		return nil, fmt.Errorf("oci-archive:%s: %d bytes in parts of at most %d bytes would be %d parts, more than %d: choose a larger --max-size", file, total, partSize, n, MaxParts)
	}
	return &partWriter{
		file: file, partSize: partSize, total: total, n: n,
		set:  PartSet{Schema: partsSchema, Archive: filepath.Base(file), Size: total, PartSize: partSize},
		disk: newDiskWriter(),
	}, nil
}

func (w *partWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if w.cur == nil {
			if w.i >= w.n {
				return written, fmt.Errorf("writing oci-archive:%s: more than the %d bytes planned", w.file, w.total)
			}
			if err := w.open(); err != nil {
				return written, err
			}
		}
		chunk := p
		if room := w.partSize - w.cur.size; int64(len(chunk)) > room {
			chunk = chunk[:room]
		}
		if err := w.put(chunk); err != nil {
			return written, err
		}
		written += len(chunk)
		p = p[len(chunk):]
		if w.cur.size == w.partSize {
			if err := w.finish(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

func (w *partWriter) open() error {
	name := PartName(w.file, w.i+1)
	out := &partOut{name: name, h: sha256.New()}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err == nil {
		if st, serr := f.Stat(); serr == nil && st.Mode().IsRegular() {
			out.cmp = f
			out.buf = make([]byte, copyBufferSize)
		} else {
			f.Close()
		}
	}
	w.cur = out
	return nil
}

// put hashes chunk and compares it with the part on disk or writes it.
func (w *partWriter) put(chunk []byte) error {
	c := w.cur
	c.h.Write(chunk)
	if c.cmp != nil {
		for done := 0; done < len(chunk); {
			b := c.buf[:min(len(c.buf), len(chunk)-done)]
			m, err := c.cmp.ReadAt(b, c.size+int64(done))
			if m == len(b) && bytes.Equal(b, chunk[done:done+m]) {
				done += m
				continue
			}
			if err != nil && err != io.EOF {
				return fmt.Errorf("reading %s: %w", c.name, err)
			}
			// Differs from here on: write the part, starting with what
			// matched.
			if err := w.startTemp(c.size + int64(done)); err != nil {
				return err
			}
			c.size += int64(len(chunk) - done)
			return w.disk.write(c.tmp, chunk[done:])
		}
		c.size += int64(len(chunk))
		return nil
	}
	if c.tmp == nil {
		if err := w.startTemp(0); err != nil {
			return err
		}
	}
	c.size += int64(len(chunk))
	return w.disk.write(c.tmp, chunk)
}

// startTemp starts writing the part to a temporary file holding the first
// keep bytes of the part on disk (which matched the stream).
func (w *partWriter) startTemp(keep int64) error {
	c := w.cur
	tmp, err := os.CreateTemp(filepath.Dir(w.file), "."+filepath.Base(w.file)+".tmp-part-")
	if err != nil {
		return fmt.Errorf("writing %s: %w", c.name, err)
	}
	c.tmp = tmp
	if c.cmp != nil {
		if keep > 0 {
			if _, err := io.Copy(tmp, io.NewSectionReader(c.cmp, 0, keep)); err != nil {
				return fmt.Errorf("writing %s: %w", c.name, err)
			}
		}
		c.cmp.Close()
		c.cmp = nil
		c.buf = nil
	}
	c.size = keep
	return nil
}

// finish completes the current part: a part on disk that matched every
// byte and has no more is kept; a written one is renamed into place.
func (w *partWriter) finish() error {
	c := w.cur
	if c.cmp != nil {
		st, err := c.cmp.Stat()
		if err != nil {
			return fmt.Errorf("reading %s: %w", c.name, err)
		}
		if st.Size() == c.size {
			c.cmp.Close()
			w.Reused++
			w.done(c)
			return nil
		}
		size := c.size
		if err := w.startTemp(size); err != nil {
			return err
		}
	}
	if err := w.disk.flush(); err != nil {
		return fmt.Errorf("writing %s: %w", c.name, err)
	}
	if err := c.tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", c.name, err)
	}
	if err := c.tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", c.name, err)
	}
	if err := c.tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", c.name, err)
	}
	if err := os.Rename(c.tmp.Name(), c.name); err != nil {
		return fmt.Errorf("writing %s: %w", c.name, err)
	}
	c.tmp = nil
	w.Written++
	w.done(c)
	return nil
}

func (w *partWriter) done(c *partOut) {
	w.set.Parts = append(w.set.Parts, Part{Name: filepath.Base(c.name), Size: c.size, SHA256: hex.EncodeToString(c.h.Sum(nil))})
	w.cur = nil
	w.i++
}

// commit finishes the last part, writes the list and removes parts of an
// earlier, longer set under the same name.
func (w *partWriter) commit(ctx context.Context) error {
	if w.cur != nil {
		if err := w.finish(); err != nil {
			return err
		}
	}
	var total int64
	for _, p := range w.set.Parts {
		total += p.Size
	}
	if total != w.total || len(w.set.Parts) != w.n {
		return fmt.Errorf("writing oci-archive:%s: wrote %d bytes in %d parts, planned %d in %d", w.file, total, len(w.set.Parts), w.total, w.n)
	}
	data, err := encodePartSet(&w.set)
	if err != nil {
		return err
	}
	list := w.file + PartsSuffix
	if err := removeSignature(list); err != nil {
		return err
	}
	if err := writeFileAtomic(list, data); err != nil {
		return fmt.Errorf("writing %s: %w", list, err)
	}
	sum := sha256.Sum256(data)
	if err := writeSignature(ctx, w.sign, list, sum[:], bytesOpener(data)); err != nil {
		return err
	}
	w.disk.stop()
	for i := w.n + 1; i <= MaxParts; i++ {
		name := PartName(w.file, i)
		if err := os.Remove(name); errors.Is(err, fs.ErrNotExist) {
			break
		} else if err != nil {
			return fmt.Errorf("removing %s of an earlier set: %w", name, err)
		}
	}
	return nil
}

// abort removes the temporary file of the part being written; complete
// parts stay for the next run to compare.
func (w *partWriter) abort() {
	w.disk.flush()
	if c := w.cur; c != nil {
		if c.cmp != nil {
			c.cmp.Close()
		}
		if c.tmp != nil {
			c.tmp.Close()
			os.Remove(c.tmp.Name())
		}
	}
	w.disk.stop()
}

func encodePartSet(s *PartSet) ([]byte, error) {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the split archive list: %w", err)
	}
	return append(data, '\n'), nil
}

// diskWriter writes buffers to files on a goroutine of its own, so that
// hashing the next bytes and writing these overlap; two buffers in flight
// bound the memory to a few MiB.
type diskWriter struct {
	once, stopped sync.Once
	jobs          chan diskJob
	free          chan []byte
	mu            sync.Mutex
	err           error
	wg            sync.WaitGroup
}

type diskJob struct {
	f   *os.File
	buf []byte
}

func newDiskWriter() *diskWriter {
	d := &diskWriter{jobs: make(chan diskJob, 2), free: make(chan []byte, 3)}
	for range 3 {
		d.free <- make([]byte, 0, copyBufferSize)
	}
	return d
}

func (d *diskWriter) start() {
	d.once.Do(func() {
		go func() {
			for j := range d.jobs {
				if _, err := j.f.Write(j.buf); err != nil {
					d.mu.Lock()
					if d.err == nil {
						d.err = err
					}
					d.mu.Unlock()
				}
				d.free <- j.buf[:0]
				d.wg.Done()
			}
		}()
	})
}

func (d *diskWriter) write(f *os.File, p []byte) error {
	d.start()
	for len(p) > 0 {
		if err := d.failed(); err != nil {
			return err
		}
		buf := <-d.free
		n := min(len(p), cap(buf))
		buf = append(buf, p[:n]...)
		p = p[n:]
		d.wg.Add(1)
		d.jobs <- diskJob{f: f, buf: buf}
	}
	return nil
}

func (d *diskWriter) failed() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// flush waits for the writes queued so far.
func (d *diskWriter) flush() error {
	d.wg.Wait()
	return d.failed()
}

// stop ends the goroutine once the queued writes are done.
func (d *diskWriter) stop() {
	d.start()
	d.stopped.Do(func() { close(d.jobs) })
}

// SignedFile is the file a signature of the archive file covers: file
// itself, or its list for a split archive.
func SignedFile(file string, split bool) string {
	if split {
		return file + PartsSuffix
	}
	return file
}
