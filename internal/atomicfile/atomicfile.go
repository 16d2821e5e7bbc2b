// Package atomicfile replaces files so that a reader sees the old content or
// the new, never a mix: each file is written to a temporary file in its own
// directory, synced, given the mode (and, where permitted, the owner) of the
// file it replaces, and renamed over it. WriteAll does this for a set of
// files, renaming only once every temporary file is written, so that a
// failure part-way leaves every target as it was. It holds no state and
// knows nothing of what it writes.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrSymlink is wrapped when a target is a symlink.
var ErrSymlink = errors.New("is a symlink")

// ErrReadOnly is wrapped when a target file has no write permission: the
// rename would replace it anyway (it is the directory that must be
// writable), so the check is explicit, and holds for root too.
var ErrReadOnly = errors.New("file is read-only")

// File is one file to write.
type File struct {
	Path string
	Data []byte
	// Mode is used when Path does not exist yet; an existing file keeps
	// its own mode.
	Mode fs.FileMode
}

// Write replaces one file atomically.
func Write(path string, data []byte, mode fs.FileMode) error {
	return WriteAll([]File{{Path: path, Data: data, Mode: mode}})
}

type pending struct {
	target, tmp string
}

// WriteAll replaces every file, all or none: temporary files are written
// first, and renamed over their targets only when all are written. A
// target that is a symlink is refused (ErrSymlink): the files written are
// in directories others may write (a release directory from a pull
// request), and a link there could point anywhere. A rename replaces a
// directory entry and never writes through one, so a link planted after
// the check is replaced, not followed.
func WriteAll(files []File) error {
	done, err := stage(files, nil)
	if err != nil {
		return err
	}
	for i, p := range done {
		if err := os.Rename(p.tmp, p.target); err != nil {
			// Renames within a directory fail only when the directory
			// changes under us; say which files were replaced.
			for _, q := range done[i+1:] {
				os.Remove(q.tmp)
			}
			done = nil
			return fmt.Errorf("replacing %s: %w (%d of %d files were replaced)", files[i].Path, cause(err), i, len(files))
		}
	}
	return nil
}

// stage writes each file's new content to a temporary file beside its
// target (symlinks followed), keeping an existing target's mode and owner;
// check, when set, may refuse a target first. On error nothing staged is
// left.
func stage(files []File, check func(f File, target string) error) (done []pending, err error) {
	defer func() {
		if err != nil {
			for _, p := range done {
				os.Remove(p.tmp)
			}
		}
	}()
	for _, f := range files {
		target, err := resolve(f.Path)
		if err != nil {
			return done, err
		}
		if check != nil {
			if err := check(f, target); err != nil {
				return done, err
			}
		}
		mode, uid, gid, exists, err := current(f.Path, target)
		if err != nil {
			return done, err
		}
		if !exists {
			mode = f.Mode
		}
		tmp, err := writeTemp(f.Path, target, f.Data, mode, uid, gid, exists)
		if err != nil {
			return done, err
		}
		done = append(done, pending{target, tmp})
	}
	return done, nil
}

// resolve refuses a target that is a symlink.
func resolve(path string) (string, error) {
	st, err := os.Lstat(path)
	if err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	link, _ := os.Readlink(path)
	return "", fmt.Errorf("%s %w (to %s): refusing to write through it; replace the link with a regular file", path, ErrSymlink, link)
}

// current returns the mode and owner of an existing target and refuses
// read-only and non-regular files.
func current(display, target string) (mode fs.FileMode, uid, gid int, exists bool, err error) {
	st, err := os.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, -1, -1, false, nil
	}
	if err != nil {
		return 0, 0, 0, false, fmt.Errorf("checking %s: %w", display, cause(err))
	}
	if !st.Mode().IsRegular() {
		return 0, 0, 0, false, fmt.Errorf("%s is not a regular file", display)
	}
	if st.Mode().Perm()&0o222 == 0 {
		return 0, 0, 0, false, fmt.Errorf("%s: %w (mode %04o); make it writable (chmod u+w) to update it", display, ErrReadOnly, st.Mode().Perm())
	}
	uid, gid = -1, -1
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		uid, gid = int(sys.Uid), int(sys.Gid)
	}
	return st.Mode().Perm(), uid, gid, true, nil
}

func writeTemp(display, target string, data []byte, mode fs.FileMode, uid, gid int, exists bool) (name string, err error) {
	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-")
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", display, cause(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return "", fmt.Errorf("writing %s: %w", display, cause(err))
	}
	if err := tmp.Chmod(mode); err != nil {
		return "", fmt.Errorf("writing %s: %w", display, cause(err))
	}
	if exists && uid >= 0 {
		// Keep the owner where we may (root updating another user's
		// checkout); otherwise the file becomes ours, as with any editor.
		_ = tmp.Chown(uid, gid)
	}
	if err := tmp.Sync(); err != nil {
		return "", fmt.Errorf("writing %s: %w", display, cause(err))
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("writing %s: %w", display, cause(err))
	}
	return tmp.Name(), nil
}

// cause drops the path an *fs.PathError or *os.LinkError repeats: messages
// here name the file already.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
