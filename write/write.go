package write

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

// ErrNotOutputDir is wrapped when the target exists and holds something a
// build does not write: replacing it would destroy the user's files.
var ErrNotOutputDir = errors.New("not a microshift-compose output directory")

// Options tune Write.
type Options struct {
	// Force replaces an existing directory whatever it holds (a mirrored
	// images/ layout is still kept).
	Force bool
	// Warn receives what the user should know that does not fail the
	// write (a killed build's leftovers kept or not removed); nil drops it.
	Warn func(msg string)
}

func (o Options) warn(format string, args ...any) {
	if o.Warn != nil {
		o.Warn(fmt.Sprintf(format, args...))
	}
}

// Write puts out into dir atomically: the files are written to a temporary
// directory beside dir (.<dir>.tmp-*) and swapped into place only when all
// are written, so a failed build leaves a previous output untouched.
//
// An existing dir is replaced only when it is a previous build's output:
// its compose.lock.json parses and every entry is one build writes (the
// lock's device files, the Containerfile, a mirrored images/ layout);
// otherwise Write refuses, naming the first foreign entry, unless
// opts.Force. Temporary directories of builds that were killed are removed
// first, and a mirrored images/ layout one of them holds is recovered into
// the new output.
func Write(ctx context.Context, dir string, out *output.Dir, opts ...Options) (err error) {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
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
	if err := checkTarget(dir, target, o.Force); err != nil {
		return err
	}
	parent := filepath.Dir(target)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("creating output directory %s: %w", dir, cause(err))
	}
	tmp, unlock, recovered, err := prepareTemp(dir, target, o)
	if err != nil {
		return err
	}
	defer unlock()
	defer func() {
		if err != nil && tmp != "" {
			os.RemoveAll(tmp)
		}
	}()
	for _, f := range out.Files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) {
			return fmt.Errorf("refusing to write %q outside the output directory", f.Path)
		}
		p := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, filepath.FromSlash(f.Path)), cause(err))
		}
		mode := os.FileMode(0o644)
		if f.Private {
			mode = 0o600
		}
		if f.Open != nil {
			if err := copyFile(p, f, mode); err != nil {
				return fmt.Errorf("writing %s: %w", filepath.Join(dir, filepath.FromSlash(f.Path)), cause(err))
			}
			continue
		}
		if err := os.WriteFile(p, f.Data, mode); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, filepath.FromSlash(f.Path)), cause(err))
		}
	}
	// A mirrored image layout (mirror --to oci:<output>/images) is carried
	// over to the new output: it can be gigabytes, and mirror resumes into
	// it. One recovered from a killed build's temporary directory is used
	// when the output has none.
	kept := filepath.Join(target, output.ImagesDir)
	carried := filepath.Join(tmp, output.ImagesDir)
	carry := ""
	if !writesUnder(out, output.ImagesDir) {
		if st, err := os.Lstat(kept); err == nil && st.IsDir() {
			carry = kept
		} else if recovered != "" {
			carry = recovered
		}
	}
	if carry != "" {
		if err := os.Rename(carry, carried); err != nil {
			return fmt.Errorf("keeping the mirrored images in %s: %w", carry, cause(err))
		}
		if carry == recovered {
			slog.Info("recovered the mirrored images of an interrupted build", "from", carry)
		}
	}
	if err := replaceDir(tmp, target); err != nil {
		if carry != "" {
			if rerr := os.Rename(carried, carry); rerr != nil {
				// Never delete the user's images with the temporary directory.
				tmp = ""
				return fmt.Errorf("%w (the mirrored images are in %s)", err, carried)
			}
		}
		return fmt.Errorf("replacing output directory %s: %w", dir, err)
	}
	if recovered != "" && carry == recovered {
		os.Remove(filepath.Dir(recovered)) // the killed build's directory, empty now
	}
	if recovered != "" && carry != recovered {
		// The output had its own images/: the recovered layout stays
		// where it is rather than being deleted.
		o.warn("a killed build left mirrored images in %s; they are kept there, not merged into %s", filepath.Dir(recovered), dir)
	}
	return nil
}

// copyFile writes a streamed file, checking its size and digest.
func copyFile(p string, f output.File, mode os.FileMode) error {
	src, err := f.Open()
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(dst, h), io.LimitReader(src, f.Size+1))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
		return fmt.Errorf("its source is not the content it is named by (sha256 %s, %d bytes)", f.SHA256, f.Size)
	}
	return nil
}

func writesUnder(out *output.Dir, dir string) bool {
	for _, f := range out.Files {
		if strings.HasPrefix(f.Path, dir+"/") {
			return true
		}
	}
	return false
}

// topLevel is every entry a build writes at the top of its output, with
// whether it is a directory.
var topLevel = map[string]bool{
	output.BlueprintFile: false,
	output.ImagesFile:    false,
	output.LockFile:      false,
	output.SBOMFile:      false,
	output.CycloneDXFile: false,
	output.StatementFile: false,
	output.Containerfile: false,
	// Installer outputs.
	output.KickstartFile:          false,
	output.BIBConfigFile:          false,
	output.InstallerBlueprintFile: false,
	output.ConfigDir:              true,
	output.ManifestsDir:           true,
	output.FilesDir:               true,
	output.ImagesDir:              true,
	output.ChartsDir:              true,
	output.OperatorsDir:           true,
}

// checkTarget decides whether target may be replaced: it does not exist,
// is an empty directory, or holds a previous build and nothing else (any
// directory with force).
func checkTarget(display, target string, force bool) error {
	st, err := os.Lstat(target)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil // created below; MkdirAll says what is in the way
	}
	if err != nil {
		return fmt.Errorf("checking output directory %s: %w", display, cause(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("output %s exists and is not a directory", display)
	}
	if force {
		return nil
	}
	entries, err := os.ReadDir(target)
	if err != nil {
		return fmt.Errorf("checking output directory %s: %w", display, cause(err))
	}
	if len(entries) == 0 {
		return nil
	}
	refuse := func(entry, why string) error {
		return fmt.Errorf("output %s: %w: %s %s, so replacing the directory would delete it; move it away, choose another --output, or pass --force", display, ErrNotOutputDir, entry, why)
	}
	for _, e := range entries {
		isDir, ours := topLevel[e.Name()]
		switch {
		case !ours:
			return refuse(e.Name(), "is not something build writes")
		case e.Type()&fs.ModeSymlink != 0:
			return refuse(e.Name(), "is a symlink, which build never writes")
		case isDir != e.IsDir() || (!isDir && !e.Type().IsRegular()):
			return refuse(e.Name(), "is not the kind of file build writes there")
		}
	}
	lockPath := filepath.Join(target, output.LockFile)
	if _, err := os.Lstat(lockPath); err != nil {
		return fmt.Errorf("output %s: %w (it has files but no %s); choose an empty or new directory, or pass --force", display, ErrNotOutputDir, output.LockFile)
	}
	prev, err := lockfile.Load(lockPath)
	if err != nil {
		return fmt.Errorf("output %s: %w: its %s does not parse (%v); choose an empty or new directory, or pass --force", display, ErrNotOutputDir, output.LockFile, err)
	}
	if foreign, err := foreignEntry(target, prev); err != nil {
		return fmt.Errorf("checking output directory %s: %w", display, err)
	} else if foreign != "" {
		return refuse(foreign, "is not a file the previous build wrote")
	}
	return nil
}

// foreignEntry returns the first entry (in path order) under the output's
// config.d/, manifests.d/ and files/ that the previous build's lock does
// not account for: a regular file it lists, or a directory above one.
func foreignEntry(target string, prev *plan.Plan) (string, error) {
	files := map[string]bool{}
	dirs := map[string]bool{}
	for _, f := range prev.Files {
		p := output.Path(f.Path)
		files[p] = true
		for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	if prev.Operators != nil {
		// The filtered catalog's layout: its files are blobs by digest.
		files[prev.Operators.Filtered.Layout+"/oci-layout"] = true
		files[prev.Operators.Filtered.Layout+"/index.json"] = true
		for _, d := range []string{prev.Operators.Filtered.Layout + "/blobs/sha256", prev.Operators.Filtered.Layout + "/blobs", prev.Operators.Filtered.Layout} {
			dirs[d] = true
		}
	}
	for _, top := range []string{output.ConfigDir, output.FilesDir, output.ManifestsDir, output.OperatorsDir} {
		root := filepath.Join(target, top)
		if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		// A foreign directory is named only when it is empty: otherwise
		// the first file in it is.
		var found, foreignDir string
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(target, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if !dirs[rel] && rel != top && foreignDir == "" {
					foreignDir = rel
				}
				return nil
			}
			if !d.Type().IsRegular() || !(files[rel] || isLayoutBlob(prev, rel)) {
				found = rel
				return filepath.SkipAll
			}
			return nil
		})
		if err != nil {
			return "", err
		}
		if found == "" {
			found = foreignDir
		}
		if found != "" {
			return found, nil
		}
	}
	return "", nil
}

// isLayoutBlob reports whether rel is a blob of the previous build's
// filtered catalog layout.
func isLayoutBlob(prev *plan.Plan, rel string) bool {
	if prev.Operators == nil {
		return false
	}
	hexSum, ok := strings.CutPrefix(rel, prev.Operators.Filtered.Layout+"/blobs/sha256/")
	return ok && len(hexSum) == 64 && strings.Trim(hexSum, "0123456789abcdef") == ""
}

// tempPrefix is the name of target's temporary directories, beside it.
func tempPrefix(target string) string { return "." + filepath.Base(target) + ".tmp-" }

// prepareTemp creates and locks the temporary directory a build writes
// into, after removing the temporary directories of killed builds. It
// returns the path of a mirrored images/ layout found in one of those (to
// be carried into the new output), left where it is. Builds into one
// parent directory serialize this step on a lock of the parent; each
// holds a lock on its own temporary directory until it returns, so a
// concurrent build never removes a live one.
func prepareTemp(display, target string, o Options) (tmp string, unlock func(), recovered string, err error) {
	parent := filepath.Dir(target)
	// Best effort: a parent we may write but not read cannot be locked,
	// and the temporary directory's own lock still protects a live build.
	if unlockParent, err := lockDir(parent, true); err == nil {
		defer unlockParent()
	}
	recovered, err = cleanLeftovers(target, o)
	if err != nil {
		return "", nil, "", err
	}
	tmp, err = os.MkdirTemp(parent, tempPrefix(target))
	if err != nil {
		return "", nil, "", fmt.Errorf("creating output directory %s: %w", display, cause(err))
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return "", nil, "", fmt.Errorf("creating output directory %s: %w", display, cause(err))
	}
	unlockTmp, err := lockDir(tmp, false)
	if err != nil {
		os.RemoveAll(tmp)
		return "", nil, "", fmt.Errorf("creating output directory %s: %w", display, cause(err))
	}
	return tmp, unlockTmp, recovered, nil
}

// cleanLeftovers removes the temporary directories killed builds left
// beside target, except a mirrored images/ layout in one of them, whose
// path it returns (the newest such layout is kept for recovery; any other
// is kept in place, never deleted). Directories a live build holds locked
// are left alone.
func cleanLeftovers(target string, o Options) (images string, err error) {
	parent := filepath.Dir(target)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return "", nil // nothing to clean that we can see
	}
	prefix := tempPrefix(target)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !e.IsDir() {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		unlock, err := lockDir(dir, false)
		if err != nil {
			continue // a build is writing it, or we cannot tell: leave it
		}
		layout := filepath.Join(dir, output.ImagesDir)
		if st, err := os.Lstat(layout); err == nil && st.IsDir() {
			if err := adoptable(layout); err != nil {
				// Not what a killed mirror leaves: neither adopted nor
				// deleted (it may be someone's), and said.
				o.warn("the temporary directory of an interrupted build, %s, holds %v; it is not recovered into %s, and left where it is", dir, err, filepath.Base(target))
				unlock()
				continue
			}
			// Keep the images, remove the rest of the directory.
			subs, _ := os.ReadDir(dir)
			for _, s := range subs {
				if s.Name() != output.ImagesDir {
					os.RemoveAll(filepath.Join(dir, s.Name()))
				}
			}
			if images == "" {
				images = layout
			}
			unlock()
			continue
		}
		unlock()
		if err := os.RemoveAll(dir); err != nil {
			o.warn("could not remove the temporary directory of an interrupted build, %s: %v", dir, cause(err))
		} else {
			slog.Info("removed the temporary directory of an interrupted build", "dir", dir)
		}
	}
	return images, nil
}

// adoptable checks that a mirrored images/ layout left by a killed build
// holds only what this tool writes there: directories and regular files,
// owned by this user. A symlink (to /etc/shadow, say) planted in a stale
// temporary directory would otherwise be carried into every later output.
func adoptable(layout string) error {
	uid := os.Getuid()
	return filepath.WalkDir(layout, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Dir(layout), p)
		if !d.IsDir() && !d.Type().IsRegular() {
			return fmt.Errorf("%s, which is %w", rel, inputfile.NotRegular(d.Type()))
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
			return fmt.Errorf("%s, owned by another user (uid %d)", rel, st.Uid)
		}
		return nil
	})
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
		return cause(err)
	}
	if err := os.Rename(tmp, target); err != nil {
		if rerr := os.Rename(old, target); rerr != nil {
			return fmt.Errorf("%w (the previous output is in %s)", cause(err), old)
		}
		return cause(err)
	}
	if err := os.RemoveAll(old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing previous output %s: %w", old, err)
	}
	return nil
}

// cause drops the path an *fs.PathError or *os.LinkError repeats: messages
// here name the output directory, not a temporary one.
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
