package airgap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// What a mirror replaces, and what it reads, are told apart by where they
// are on this machine, not by how they are written: "./x" and "x", a
// symlink and its target, oci:B and oci-archive:B, a hard link and its
// other name, a split archive's set, list and first part are each one
// place. A command that would replace one of its own inputs (a bundle
// named as its own base, a layout copied onto itself, a lock file
// overwritten by the archive it lists) is refused before anything is
// read.

// place is a path resolved: its absolute path with every symlink followed
// (those of its directories when it does not exist), and the file itself
// when it does (for hard links).
type place struct {
	path string
	info os.FileInfo
}

// resolvePlace resolves p; a split archive's list or first part resolves
// to the set's name.
func resolvePlace(p string) place {
	if base, split, err := splitFile(p); err == nil && split {
		p = base
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = filepath.Clean(p)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	} else if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(dir, filepath.Base(abs))
	}
	pl := place{path: abs}
	if st, err := os.Stat(abs); err == nil {
		pl.info = st
	} else if st, err := os.Stat(abs + PartsSuffix); err == nil {
		pl.info = st
	}
	return pl
}

// same reports whether a and b are one file or directory.
func (a place) same(b place) bool {
	if a.path == b.path {
		return true
	}
	return a.info != nil && b.info != nil && os.SameFile(a.info, b.info)
}

// within reports whether a is dir or a file under it.
func (a place) within(dir place) bool {
	if a.same(dir) {
		return true
	}
	return strings.HasPrefix(a.path, dir.path+string(filepath.Separator))
}

// writtenIn reports whether a is a file mirror writes in the layout
// directory dir: its top-level files (index.json, oci-layout, the bundle
// file, dir:'s image list), its blobs, and dir:'s per-image directories
// (named by a sha256). Other files there are not touched.
func (a place) writtenIn(dir place) bool {
	rel, err := filepath.Rel(dir.path, a.path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false
	}
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	switch first {
	case indexFile, layoutFile, BundleFile, DirListFile, "blobs":
		return true
	}
	return hexDigest.MatchString(first)
}

// Replaces reports whether writing the target would replace or change the
// file or directory at path: the layout directory of oci:DIR and dir:DIR
// and what mirror writes in it, the archive FILE of oci-archive:FILE, its parts,
// their list and its signature, and its staging directory. A registry
// replaces no file.
func (t Target) Replaces(path string) bool {
	if t.Transport == TransportDocker || t.Transport == "" || path == "" {
		return false
	}
	in := resolvePlace(path)
	dest := resolvePlace(t.Path)
	if t.Transport != TransportArchive || (dest.info != nil && dest.info.IsDir()) {
		return in.same(dest) || in.writtenIn(dest)
	}
	if in.same(dest) || in.within(resolvePlace(stagingDir(t.Path))) {
		return true
	}
	// FILE.sig, FILE.parts.json.sig and the parts FILE.NNN: beside FILE,
	// named after it.
	if filepath.Dir(in.path) != filepath.Dir(dest.path) {
		return false
	}
	rest, ok := strings.CutPrefix(filepath.Base(in.path), filepath.Base(dest.path))
	if !ok {
		return false
	}
	rest = strings.TrimSuffix(rest, ".sig")
	return rest == "" || rest == PartsSuffix || partNumber.MatchString(rest) && len(rest) == 4
}

// checkNotReplaced refuses a source or base the destination would
// replace: flag names the input (--from, --since) for the message.
func checkNotReplaced(flag string, in, to Target) error {
	if in.Transport == "" || !to.Replaces(in.Path) {
		return nil
	}
	if flag == "--since" {
		return fmt.Errorf("%w %q: it is also --since %s, a base of the bundle: a bundle is made against what the site holds, and writing it there would replace that; write the bundle to a new file or directory", ErrBadDestination, to, in)
	}
	return fmt.Errorf("%w %q: it is also the source (%s %s); copy to another destination", ErrBadDestination, to, flag, in)
}
