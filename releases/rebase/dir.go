package rebase

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/atomicfile"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/releases"
)

// CoreComponent names the core release file (release-<arch>.json) where a
// component name is expected.
const CoreComponent = "core"

// ComponentName is the component a release file belongs to, CoreComponent
// for the core file.
func ComponentName(f *releases.File) string {
	if f.Component == "" {
		return CoreComponent
	}
	return f.Component
}

// dirFile is one release file of a directory being updated.
type dirFile struct {
	path string
	data []byte
	file *releases.File
}

// LoadFiles reads the release files of dir: a whole release (with a core
// file; then they must form one) or only component files, such as a catalog
// component's release/ directory. label names them for people: "release
// 4.18 (dir)", or "component release files in dir".
func LoadFiles(dir string) (files []*releases.File, label string, err error) {
	dfs, rel, err := readDir(dir)
	if err != nil {
		return nil, "", err
	}
	if rel != nil {
		return rel.Files(), "release " + rel.String(), nil
	}
	for _, d := range dfs {
		files = append(files, d.file)
	}
	return files, "component release files in " + dir, nil
}

// readDir reads and parses every release file of dir, sorted by name, and
// when there is a core file checks that they form a release (rel is nil for
// a directory of component files only).
func readDir(dir string) (dfs []*dirFile, rel *releases.Release, err error) {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("release dir %s does not exist", dir)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading release dir: %w", err)
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("release dir %s is not a directory", dir)
	}
	if atomicfile.Pending(filepath.Join(dir, releases.UpdateJournal)) {
		return nil, nil, &releases.InterruptedError{Dir: dir}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading release dir %s: %w", dir, cause(err))
	}
	var out []*dirFile
	var files []*releases.File
	for _, e := range entries {
		if _, _, ok, err := releases.ParseFileName(e.Name()); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", dir, err)
		} else if !ok {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if !e.Type().IsRegular() {
			return nil, nil, fmt.Errorf("%s: %w", path, inputfile.NotRegular(e.Type()))
		}
		data, err := inputfile.Read("release file", path, releases.MaxFileSize)
		if err != nil {
			return nil, nil, err
		}
		f, err := releases.ParseFile(path, e.Name(), data)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, &dirFile{path: path, data: data, file: f})
		files = append(files, f)
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("release dir %s has no release files (release-<arch>.json or release-<component>-<arch>.json)", dir)
	}
	for _, f := range files {
		if f.Component == "" {
			rel, err := releases.New(dir, files)
			if err != nil {
				return nil, nil, err
			}
			return out, rel, nil
		}
	}
	return out, nil, nil
}

// Selection narrows the release files a command works on.
type Selection struct {
	// Arches keeps the files of these arches; empty means every arch.
	Arches []releases.Arch
	// Components keeps the files of these components (CoreComponent for
	// release-<arch>.json); empty means every component.
	Components []string
}

// IsZero reports whether the selection keeps every file.
func (s Selection) IsZero() bool { return len(s.Arches) == 0 && len(s.Components) == 0 }

// Filter returns the files the selection keeps, sorted by name; source
// names them in errors. A component or arch the files do not have is an
// error, and so is a selection that keeps nothing, so that a typo does not
// silently select nothing.
func (s Selection) Filter(all []*releases.File, source string) ([]*releases.File, error) {
	all = slices.Clone(all)
	slices.SortFunc(all, func(a, b *releases.File) int { return strings.Compare(a.Name, b.Name) })
	var comps []string
	arches := map[releases.Arch]bool{}
	for _, f := range all {
		if c := ComponentName(f); !slices.Contains(comps, c) {
			comps = append(comps, c)
		}
		arches[f.Arch] = true
	}
	slices.Sort(comps)
	for _, c := range s.Components {
		if slices.Contains(comps, c) {
			continue
		}
		if m := suggest.Closest(c, comps); m != "" {
			return nil, fmt.Errorf("release %s has no component %q; did you mean %q?", source, c, m)
		}
		return nil, fmt.Errorf("release %s has no component %q (it has %s)", source, c, strings.Join(comps, ", "))
	}
	for _, a := range s.Arches {
		if !arches[a] {
			return nil, fmt.Errorf("release %s has no %s files", source, a)
		}
	}
	var out []*releases.File
	for _, f := range all {
		if len(s.Arches) > 0 && !slices.Contains(s.Arches, f.Arch) {
			continue
		}
		if len(s.Components) > 0 && !slices.Contains(s.Components, ComponentName(f)) {
			continue
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		var arches []string
		for _, a := range s.Arches {
			arches = append(arches, string(a))
		}
		return nil, fmt.Errorf("release %s has no %s files for %s", source, strings.Join(s.Components, ", "), strings.Join(arches, ", "))
	}
	return out, nil
}

// Interrupted reports whether dir holds the journal of an interrupted
// update, which FinishInterrupted finishes.
func Interrupted(dir string) bool {
	return atomicfile.Pending(filepath.Join(dir, releases.UpdateJournal))
}

// FinishInterrupted completes an update of dir that was interrupted after
// its commit point (the journal names every new file, complete and synced):
// the files not yet renamed are, and the journal is removed. It returns how
// many files it renamed; 0 and nil when no update was interrupted (the
// hidden temporary files of an update killed before its commit point are
// removed then).
func FinishInterrupted(dir string) (int, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return 0, nil // readDir reports it
	}
	return atomicfile.Recover(filepath.Join(dir, releases.UpdateJournal))
}
