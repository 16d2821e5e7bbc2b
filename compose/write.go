package compose

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/microshift-compose/microshift-compose/blueprints"
)

// ErrNotOutputDir is wrapped when the target exists, is not empty, and does
// not hold a previous build's compose.lock.json: replacing it could destroy
// unrelated files.
var ErrNotOutputDir = errors.New("not a microshift-compose output directory")

// Write puts out into dir atomically: the files are written to a temporary
// directory beside dir and swapped into place only when all are written, so
// a failed build leaves a previous output untouched.
func Write(ctx context.Context, dir string, out *Output) (err error) {
	if dir == "" {
		return errors.New("no output directory given")
	}
	target, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("resolving output directory %s: %w", dir, err)
	}
	// An --output that is a symlink means its target: swap that directory,
	// keep the link.
	if st, err := os.Lstat(target); err == nil && st.Mode()&os.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(target); err != nil {
			return fmt.Errorf("resolving output directory %s: %w", dir, err)
		}
	}
	if err := checkTarget(dir, target); err != nil {
		return err
	}
	parent := filepath.Dir(target)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(target)+".tmp-")
	if err != nil {
		return fmt.Errorf("creating temporary output directory: %w", err)
	}
	defer func() {
		if err != nil && tmp != "" {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("creating temporary output directory: %w", err)
	}
	for _, f := range out.Files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return fmt.Errorf("refusing to write %q outside the output directory", f.Path)
		}
		p := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
		mode := os.FileMode(0o644)
		if f.Private {
			mode = 0o600
		}
		if err := os.WriteFile(p, f.Data, mode); err != nil {
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
	}
	// A mirrored image layout (mirror --to oci:<output>/images) is carried
	// over to the new output: it can be gigabytes, and mirror resumes into it.
	kept := filepath.Join(target, ImagesDir)
	carried := filepath.Join(tmp, ImagesDir)
	carry := false
	if st, err := os.Lstat(kept); err == nil && st.IsDir() && !writesUnder(out, ImagesDir) {
		if err := os.Rename(kept, carried); err != nil {
			return fmt.Errorf("keeping the mirrored images in %s: %w", kept, err)
		}
		carry = true
	}
	if err := replaceDir(tmp, target); err != nil {
		if carry {
			if rerr := os.Rename(carried, kept); rerr != nil {
				// Never delete the user's images with the temporary directory.
				tmp = ""
				return fmt.Errorf("%w (the mirrored images are in %s)", err, carried)
			}
		}
		return err
	}
	return nil
}

// ImagesDir is the output subdirectory that `mirror --to oci:<output>/images`
// fills and the bootc Containerfile copies; build keeps it across rebuilds.
const ImagesDir = blueprints.BootcImagesDir

func writesUnder(out *Output, dir string) bool {
	for _, f := range out.Files {
		if strings.HasPrefix(f.Path, dir+"/") {
			return true
		}
	}
	return false
}

func checkTarget(display, target string) error {
	st, err := os.Lstat(target)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checking output directory: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("output %s exists and is not a directory", display)
	}
	entries, err := os.ReadDir(target)
	if err != nil {
		return fmt.Errorf("checking output directory: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(target, LockFile)); err != nil {
		return fmt.Errorf("output %s: %w (it has files but no %s); choose an empty or new directory", display, ErrNotOutputDir, LockFile)
	}
	return nil
}

// replaceDir moves tmp to target, swapping atomically where the kernel can.
func replaceDir(tmp, target string) error {
	if err := os.Rename(tmp, target); err == nil {
		return nil
	}
	// target exists (rename cannot replace a non-empty directory).
	if err := exchange(tmp, target); err == nil {
		return os.RemoveAll(tmp) // tmp now holds the previous output
	}
	old := tmp + ".old"
	if err := os.Rename(target, old); err != nil {
		return fmt.Errorf("replacing %s: %w", target, err)
	}
	if err := os.Rename(tmp, target); err != nil {
		if rerr := os.Rename(old, target); rerr != nil {
			return fmt.Errorf("replacing %s: %w (the previous output is in %s)", target, err, old)
		}
		return fmt.Errorf("replacing %s: %w", target, err)
	}
	if err := os.RemoveAll(old); err != nil && !strings.Contains(err.Error(), "no such file") {
		return fmt.Errorf("removing previous output %s: %w", old, err)
	}
	return nil
}
