package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

// DefaultMaxFile bounds any one file read through a Dir's FS; parsers set
// lower limits of their own with ReadFS.
const DefaultMaxFile = 32 << 20

// OutsideError is a path that resolves outside the directory it is read
// from: through a symlink, an absolute symlink, or "..".
type OutsideError struct {
	// Link is the symlink's target, when the path is a symlink.
	Link string
}

func (e *OutsideError) Error() string {
	if e.Link != "" {
		return fmt.Sprintf("symlink to %s, outside the directory it is read from", e.Link)
	}
	return "resolves outside the directory it is read from (through a symlink or ..)"
}

// Outside describes the path for a message that names the directory:
// "a symlink to /etc/shadow, outside the component directory".
func (e *OutsideError) Outside(dir string) string {
	if e.Link != "" {
		return fmt.Sprintf("a symlink to %s, outside the %s", e.Link, dir)
	}
	return "a path that resolves outside the " + dir
}

func (e *OutsideError) Unwrap() error { return ErrOutsideRoot }

// Dir returns the files of the directory at path as an fs.FS that refuses
// what the gate refuses: paths resolving outside path (symlinks included,
// checked by the kernel through os.Root), and non-regular files, without
// blocking on them. Files are read up to DefaultMaxFile; ReadFS sets a
// lower limit. Sub (fs.Sub) roots a new FS at a subdirectory, so that a
// component directory's symlinks must stay inside the component.
//
// The directory stays open until the FS is garbage collected.
func Dir(path string) (fs.FS, error) {
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &dirFS{root: r}, nil
}

type dirFS struct {
	root *os.Root
}

var (
	_ fs.ReadLinkFS = (*dirFS)(nil)
	_ fs.StatFS     = (*dirFS)(nil)
	_ fs.ReadDirFS  = (*dirFS)(nil)
	_ fs.ReadFileFS = (*dirFS)(nil)
	_ fs.SubFS      = (*dirFS)(nil)
)

func (d *dirFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := d.root.OpenFile(name, openFlags, 0)
	if err != nil {
		return nil, d.pathError("open", name, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: unwrapPath(err)}
	}
	switch {
	case st.IsDir():
		return &dirFile{File: f}, nil
	case st.Mode().IsRegular():
		return &regularFile{File: f, left: DefaultMaxFile}, nil
	}
	f.Close()
	return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w%s", ErrNotRegular, describeMode(st.Mode()))}
}

func (d *dirFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	st, err := d.root.Stat(name)
	if err != nil {
		return nil, d.pathError("stat", name, err)
	}
	return st, nil
}

func (d *dirFS) ReadLink(name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	target, err := d.root.Readlink(name)
	if err != nil {
		return "", d.pathError("readlink", name, err)
	}
	return target, nil
}

func (d *dirFS) Lstat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrInvalid}
	}
	st, err := d.root.Lstat(name)
	if err != nil {
		return nil, d.pathError("lstat", name, err)
	}
	return st, nil
}

func (d *dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	f, err := d.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	df, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
	}
	entries, err := df.ReadDir(-1)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: unwrapPath(err)}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

func (d *dirFS) ReadFile(name string) ([]byte, error) {
	return ReadFS(d, name, DefaultMaxFile)
}

func (d *dirFS) Sub(dir string) (fs.FS, error) {
	if dir == "." {
		return d, nil
	}
	if !fs.ValidPath(dir) {
		return nil, &fs.PathError{Op: "sub", Path: dir, Err: fs.ErrInvalid}
	}
	r, err := d.root.OpenRoot(dir)
	if err != nil {
		return nil, d.pathError("open", dir, err)
	}
	return &dirFS{root: r}, nil
}

// pathError turns an os.Root error into the gate's: a path escaping the
// root is an OutsideError naming the symlink's target, a socket is not a
// regular file.
func (d *dirFS) pathError(op, name string, err error) error {
	inner := unwrapPath(err)
	switch {
	case strings.Contains(inner.Error(), "path escapes from parent"):
		oe := &OutsideError{}
		if target, lerr := d.root.Readlink(name); lerr == nil {
			oe.Link = target
		}
		inner = oe
	case errors.Is(inner, syscall.ENXIO):
		inner = fmt.Errorf("%w (a socket)", ErrNotRegular)
	case errors.Is(inner, syscall.ELOOP):
		inner = errors.New("too many levels of symlinks")
	}
	return &fs.PathError{Op: op, Path: name, Err: inner}
}

// ReadFS reads name from fsys, refusing a non-regular file and a file
// larger than limit bytes; through a Dir's FS it also refuses paths that
// resolve outside the directory. Errors are *fs.PathError values whose
// message, without the path, is "file is larger than N bytes", "not a
// regular file (a named pipe)" and so on.
func ReadFS(fsys fs.FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: unwrapPath(err)}
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w%s", ErrNotRegular, describeMode(st.Mode()))}
	}
	data, err := readLimited(f, st.Size(), limit)
	if errors.Is(err, ErrTooLarge) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: &TooLargeError{Limit: limit}}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: unwrapPath(err)}
	}
	return data, nil
}

// TooLargeError is a file over its limit.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string { return fmt.Sprintf("file is larger than %d bytes", e.Limit) }
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// regularFile is an open regular file that yields at most its limit, so
// that a file growing while it is read cannot make a reader unbounded.
type regularFile struct {
	*os.File
	left int64
}

func (f *regularFile) Read(p []byte) (int, error) {
	if f.left < 0 {
		return 0, &TooLargeError{Limit: DefaultMaxFile}
	}
	if int64(len(p)) > f.left+1 {
		p = p[:f.left+1]
	}
	n, err := f.File.Read(p)
	f.left -= int64(n)
	if f.left < 0 {
		return n, &TooLargeError{Limit: DefaultMaxFile}
	}
	return n, err
}

func (f *regularFile) Stat() (fs.FileInfo, error) { return f.File.Stat() }

// dirFile is an open directory; its entries are read through ReadDir.
type dirFile struct{ *os.File }

func (f *dirFile) Read([]byte) (int, error) { return 0, syscall.EISDIR }

var (
	_ fs.ReadDirFile = (*dirFile)(nil)
	_ io.Reader      = (*regularFile)(nil)
)

// NotRegular is the error for a file of mode m where a regular file is
// expected: "not a regular file (a named pipe)".
func NotRegular(m fs.FileMode) error { return fmt.Errorf("%w%s", ErrNotRegular, describeMode(m)) }
