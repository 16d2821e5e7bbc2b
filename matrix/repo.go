package matrix

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNoRepository is returned by RepoRoot when a directory is in no git
// work tree.
var ErrNoRepository = errors.New("not in a git work tree")

// RepoRoot returns the top directory of the git work tree holding dir (as
// git finds it: the nearest directory with a .git directory, or a .git
// file in a linked work tree or submodule), symbolic links resolved.
func RepoRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("finding the repository of %s: %w", dir, err)
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("finding the repository of %s: %w", dir, err)
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("finding the repository of %s: %w", dir, err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("%s: %w", abs, ErrNoRepository)
		}
		d = parent
	}
}

// RepoRelative returns dir (relative to the working directory, or
// absolute) as a path from root, slash-separated: where a CI job that
// checks the repository at root out, and runs from the top of its
// checkout, finds it. A dir outside root is refused (the job would not
// have it), as is a path that cannot stand on a command line as it is.
func RepoRelative(root, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s is outside the repository %s, which is all the CI jobs check out", dir, root)
	}
	rel = filepath.ToSlash(rel)
	if !ShellSafe(rel) {
		return "", fmt.Errorf("%s: its path in the repository, %q, cannot stand on a job's command line as it is (letters, digits and ._:/@+=,- only)", dir, rel)
	}
	return rel, nil
}
