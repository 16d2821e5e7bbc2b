// Package inputfile is the one gate every file the tool reads goes through:
// the files users name on the command line (--config, --lvmd, locks,
// payloads, CSVs) with Read, and the files of a directory (a catalog, a
// component, a release directory) with Dir. Whatever the source, a file is
// read only when it is a regular file (a named pipe, a device or a socket
// is refused without blocking on it), no larger than the limit its parser
// sets, and, for a directory, only when it resolves inside that directory
// (a symlink to /etc/shadow in a component is refused, never followed).
// CheckYAML refuses YAML whose aliases would expand far beyond its size,
// before any YAML library expands them.
//
// Structure is bounded before any decoder runs, by scans in constant
// memory: CheckTOML (MaxTOMLDepth, MaxTOMLValues), CheckJSON
// (MaxJSONDepth, MaxJSONValues), CheckYAML (MaxYAMLDepth, MaxYAMLNodes;
// MaxManifestNodes for what kustomize renders of one component). These
// constants are the limits, documented for users in docs/reference.md, "Limits"; their
// errors (StructureError, ErrStructure) name a line and quote at most a
// short excerpt of it.
//
// It reads and refuses; it does not parse what it reads (CheckYAML aside)
// or know what the files mean.
package inputfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Sentinels wrapped by the gate's errors, for errors.Is.
var (
	// ErrNotRegular: a named pipe, socket, device or directory where a
	// file was expected.
	ErrNotRegular = errors.New("not a regular file")
	// ErrOutsideRoot: a path (through a symlink or "..") that resolves
	// outside the directory it must stay in.
	ErrOutsideRoot = errors.New("resolves outside its directory")
	// ErrTooLarge: a file larger than its limit.
	ErrTooLarge = errors.New("file is too large")
)

// openFlags never block: opening a named pipe for reading with O_NONBLOCK
// returns at once (and the pipe is then refused by its type), where a
// plain open would wait for a writer forever.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// Read returns the contents of path, at most limit bytes. what names the
// kind of input in messages: "config", "lvmd config", "lock file". The
// path itself may be a symlink (the user named it); what it names must be
// a regular file.
func Read(what, path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &notExistError{fmt.Sprintf("%s %s does not exist", what, path)}
	}
	if errors.Is(err, syscall.ENXIO) {
		// A socket (or a FIFO without a writer on some systems).
		return nil, fmt.Errorf("%s %s is %w (a socket)", what, path, ErrNotRegular)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", what, path, unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", what, path, unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %s is %w%s", what, path, ErrNotRegular, describeMode(st.Mode()))
	}
	data, err := readLimited(f, st.Size(), limit)
	if errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("%s: file is larger than %d bytes", path, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", what, path, unwrapPath(err))
	}
	return data, nil
}

// readLimited reads an open regular file of the given size, refusing it
// when it is, or grows while read, beyond limit.
func readLimited(r io.Reader, size, limit int64) ([]byte, error) {
	if size > limit {
		return nil, ErrTooLarge
	}
	// Sized up front: io.ReadAll's doubling would hold up to twice the
	// file, and the garbage of every step, at once.
	var buf bytes.Buffer
	buf.Grow(int(min(size, limit)) + bytes.MinRead)
	_, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if int64(len(data)) > limit {
		return nil, ErrTooLarge
	}
	return data, nil
}

// describeMode says what kind of non-regular file a mode is, for messages:
// " (a named pipe)".
func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return " (a directory)"
	case m&fs.ModeNamedPipe != 0:
		return " (a named pipe)"
	case m&fs.ModeSocket != 0:
		return " (a socket)"
	case m&fs.ModeCharDevice != 0:
		return " (a character device)"
	case m&fs.ModeDevice != 0:
		return " (a block device)"
	case m&fs.ModeSymlink != 0:
		return " (a symlink)"
	}
	return ""
}

// unwrapPath drops fs.PathError's repetition of the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// notExistError is a missing file: its message names it, and it is
// fs.ErrNotExist for errors.Is.
type notExistError struct{ msg string }

func (e *notExistError) Error() string { return e.msg }
func (e *notExistError) Unwrap() error { return fs.ErrNotExist }
