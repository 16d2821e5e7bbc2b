package operators

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// IndexIgnore is opm's file of patterns of files of a configs directory it
// does not read.
const IndexIgnore = ".indexignore"

// ignores are the patterns of a catalog's .indexignore files, by the
// directory they are in ("" for the configs directory, "a/b/" below it).
type ignores map[string][]string

// add reads the patterns of the .indexignore at p (path.Match patterns, one
// a line, # comments).
func (ig ignores) add(p string, r io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(r, 1<<20+1))
	if err != nil {
		return fmt.Errorf("reading %s: %w", p, err)
	}
	if len(data) > 1<<20 {
		return fmt.Errorf("%s: %w: more than 1 MiB of patterns", p, ErrLimit)
	}
	dir, _ := path.Split(p)
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if _, err := path.Match(l, ""); err != nil {
			return fmt.Errorf("%s: pattern %s: %w", p, text.QuoteExcerpt(l), err)
		}
		ig[dir] = append(ig[dir], strings.TrimPrefix(l, "/"))
	}
	return nil
}

// ignored reports whether p is an .indexignore file, or a pattern of one
// in p's directory or above it matches p's name or its path below that
// directory, as opm skips such files.
func (ig ignores) ignored(p string) bool {
	if path.Base(p) == IndexIgnore {
		return true
	}
	for dir, pats := range ig {
		rest, ok := strings.CutPrefix(p, dir)
		if !ok {
			continue
		}
		for _, pat := range pats {
			if m, _ := path.Match(pat, rest); m {
				return true
			}
			if m, _ := path.Match(pat, path.Base(rest)); m {
				return true
			}
		}
	}
	return false
}

// FSFiles are the files of a configs directory in fsys (a directory on
// disk, a test's fstest.MapFS), in lexical order, without those its
// .indexignore files name. Symbolic links and other special files are
// refused.
func FSFiles(fsys fs.FS) Files {
	return func(yield func(File) error) error {
		ig := ignores{}
		var names []string
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			if !d.Type().IsRegular() {
				return fmt.Errorf("%s: not a regular file (a symbolic link or device is not read)", p)
			}
			if d.Name() == IndexIgnore {
				f, err := fsys.Open(p)
				if err != nil {
					return err
				}
				defer f.Close()
				return ig.add(p, f)
			}
			names = append(names, p)
			return nil
		})
		if err != nil {
			return err
		}
		for _, n := range names {
			if ig.ignored(n) {
				continue
			}
			f, err := fsys.Open(n)
			if err != nil {
				return err
			}
			err = yield(File{Path: n, R: f})
			f.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}
}
