package releases

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
)

// Release is a set of release files for one MicroShift version.
type Release struct {
	// Version is major.minor.patch of the core files' release.base; the
	// prerelease part (nightly stamps) is dropped so that constraints such as
	// ">=5.0" match development builds.
	Version *semver.Version
	// Source says where the files came from: "embedded" or a directory path.
	Source string
	// Origin records where embedded data was imported from (upstream repo
	// and commit), or the release-info RPM a directory's files came from;
	// empty for other directories.
	Origin string
	// RPMs are the release-info RPMs the files came from (release fetch,
	// release import FILE.rpm), the core package first; nil otherwise.
	RPMs []RPM
	// Development marks an embedded stream taken from upstream's
	// development branch (main): selectable by --release, but a command
	// without one takes the newest release branch's stream.
	Development bool
	// Build is the build of MicroShift the release is (knowledge's
	// builds: "redhat", "microshift-io"; build.go): what its recorded
	// release-info RPMs' version says, else whose registries its images
	// come from.
	Build string
	// MicroShiftIO is the version of its microshift-io RPMs; nil for a
	// release of another build, or whose RPMs were not recorded.
	MicroShiftIO *MicroShiftIOVersion
	// Resolved maps tag references of its files to the digest references
	// release fetch resolved them to (a registry answered then), so that a
	// build pins them without the network.
	Resolved map[string]string
	files    map[string]*File
}

// New assembles a release from parsed files. At least one core file is
// required, and all core files must agree on major.minor.patch.
func New(source string, files []*File) (*Release, error) {
	r := &Release{Source: source, files: map[string]*File{}}
	var coreNames []string
	for _, f := range files {
		if _, dup := r.files[f.Name]; dup {
			return nil, fmt.Errorf("%s: %s appears twice", source, f.Name)
		}
		r.files[f.Name] = f
		if f.Component == "" {
			coreNames = append(coreNames, f.Name)
		}
	}
	if len(coreNames) == 0 {
		return nil, fmt.Errorf("%s: no core release file (release-x86_64.json or release-aarch64.json)", source)
	}
	sort.Strings(coreNames)
	build, err := identify(source, r.files, files)
	if err != nil {
		return nil, err
	}
	r.Build = build
	for _, n := range coreNames {
		f := r.files[n]
		v, err := semver.NewVersion(f.Base)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: release.base %q is not a semantic version: %v", source, n, f.Base, err)
		}
		core := semver.New(v.Major(), v.Minor(), v.Patch(), "", "")
		if r.Version == nil {
			r.Version = core
			continue
		}
		if !r.Version.Equal(core) {
			return nil, fmt.Errorf("%s: core files disagree on the release: %s says %s, %s says %s",
				source, coreNames[0], r.Version, n, core)
		}
	}
	return r, nil
}

// Stream is the major.minor the release belongs to ("4.18").
func (r *Release) Stream() string {
	return fmt.Sprintf("%d.%d", r.Version.Major(), r.Version.Minor())
}

// String names the release for messages: "4.18 (embedded)".
func (r *Release) String() string { return r.Stream() + " (" + r.Source + ")" }

// File returns the file for a component ("" = core) and arch, or nil.
func (r *Release) File(component string, arch Arch) *File {
	return r.files[FileName(component, arch)]
}

// Files returns every file sorted by name.
func (r *Release) Files() []*File {
	out := make([]*File, 0, len(r.files))
	for _, f := range r.files {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Base returns the core file's release.base for arch, or "" when the release
// has no core file for it.
func (r *Release) Base(arch Arch) string {
	if f := r.File("", arch); f != nil {
		return f.Base
	}
	return ""
}

// Arches lists the arches the release has a core file for.
func (r *Release) Arches() []Arch {
	var out []Arch
	for _, a := range Arches {
		if r.File("", a) != nil {
			out = append(out, a)
		}
	}
	return out
}

// LoadDir reads every release-*.json file in dir (the flat layout the
// microshift-release-info RPMs install). Other files are ignored.
func LoadDir(dir string) (*Release, error) {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("release dir %s does not exist", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("reading release dir: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("release dir %s is not a directory", dir)
	}
	fsys, err := inputfile.Dir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading release dir %s: %w", dir, errors.Unwrap(err))
	}
	return loadFS(fsys, dir, func(n string) string { return filepath.Join(dir, n) })
}

// UpdateJournal is the file `release update` keeps in a release directory
// while it replaces the files: when it is there, an update was interrupted
// and the directory is part old, part new.
const UpdateJournal = ".microshift-compose-update.journal"

// CheckNoInterruptedUpdate refuses a release directory (fsys, shown as
// dir) that holds an UpdateJournal.
func CheckNoInterruptedUpdate(fsys fs.FS, dir string) error {
	if _, err := fs.Stat(fsys, UpdateJournal); err == nil {
		return &InterruptedError{Dir: dir}
	}
	return nil
}

// InterruptedError is a release directory an update did not finish.
type InterruptedError struct{ Dir string }

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("release dir %s: an update was interrupted and left its files part old, part new (%s is there); run 'microshift-compose release update %s' to finish it", e.Dir, UpdateJournal, e.Dir)
}

func loadFS(fsys fs.FS, source string, display func(string) string) (*Release, error) {
	if err := CheckNoInterruptedUpdate(fsys, source); err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("reading release dir %s: %w", source, err)
	}
	var files []*File
	raw := map[string][]byte{}
	for _, e := range entries {
		if _, _, ok, err := ParseFileName(e.Name()); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		} else if !ok {
			continue
		}
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf("%s: %w", display(e.Name()), inputfile.NotRegular(e.Type()))
		}
		data, err := readLimited(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", display(e.Name()), err)
		}
		f, err := ParseFile(display(e.Name()), e.Name(), data)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		raw[e.Name()] = data
	}
	r, err := New(source, files)
	if err != nil {
		return nil, err
	}
	rec, err := readRecord(fsys, source, raw)
	if err != nil || rec == nil {
		return r, err
	}
	r.RPMs, r.Resolved = rec.RPMs, rec.Resolved
	if len(r.RPMs) > 0 {
		r.Origin = r.RPMs[0].NEVRA
	}
	if err := r.setBuildOfRPMs(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(source, RPMRecordFile), err)
	}
	return r, nil
}

func readLimited(fsys fs.FS, name string) ([]byte, error) {
	data, err := inputfile.ReadFS(fsys, name, MaxFileSize)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err // fs.PathError repeats the path
		}
		return nil, err
	}
	return data, nil
}

// ErrNoMatch is wrapped when no release satisfies a constraint.
var ErrNoMatch = errors.New("no release matches")

// Select returns the newest release satisfying constraint; "" is the
// newest that is not a development stream (as SelectEmbedded).
func Select(rels []*Release, constraint string) (*Release, error) {
	if strings.TrimSpace(constraint) == "" {
		if released := slices.DeleteFunc(slices.Clone(rels), func(r *Release) bool { return r.Development }); len(released) > 0 {
			rels = released
		}
	}
	versions := make([]*semver.Version, len(rels))
	for i, r := range rels {
		versions[i] = r.Version
	}
	i, err := selectVersion(versions, constraint)
	if err != nil {
		return nil, err
	}
	return rels[i], nil
}

// selectVersion returns the index of the newest version satisfying
// constraint ("" = newest).
func selectVersion(versions []*semver.Version, constraint string) (int, error) {
	if len(versions) == 0 {
		return 0, errors.New("no releases to choose from")
	}
	order := make([]int, len(versions))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return versions[order[a]].GreaterThan(versions[order[b]]) })
	if strings.TrimSpace(constraint) == "" {
		return order[0], nil
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return 0, fmt.Errorf("parsing release constraint %q: %v", constraint, err)
	}
	var have []string
	for _, i := range order {
		if c.Check(versions[i]) {
			return i, nil
		}
		have = append(have, fmt.Sprintf("%d.%d", versions[i].Major(), versions[i].Minor()))
	}
	// newest first so far; list oldest first, by version not text
	slices.Reverse(have)
	return 0, fmt.Errorf("%w %q (have %s)", ErrNoMatch, constraint, strings.Join(have, ", "))
}

// IsDigestPinned reports whether ref names its image by digest.
func IsDigestPinned(ref string) bool {
	r, err := imageref.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return false
	}
	_, ok := r.(name.Digest)
	return ok
}

// Load picks the release a command works on: the files in dir when dir is
// set (checked against constraint when that is set too); otherwise, for a
// constraint naming one version exactly ("4.18.7"), that version from the
// per-user store of fetched releases when it is there, and else the newest
// embedded release matching constraint.
func Load(dir, constraint string) (*Release, error) {
	if dir == "" {
		exact, isExact := exactVersion(constraint)
		if isExact {
			if r, err := loadFetched(exact); r != nil || err != nil {
				return r, err
			}
		}
		r, err := SelectEmbedded(constraint)
		if err != nil {
			if isExact {
				// The CLI adds how to get it (release fetch, --release-dir).
				return nil, fmt.Errorf("selecting release %s: %w", exact, err)
			}
			return nil, fmt.Errorf("selecting embedded release: %w", err)
		}
		return r, nil
	}
	r, err := LoadDir(dir)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(constraint) != "" {
		c, err := semver.NewConstraint(constraint)
		if err != nil {
			return nil, fmt.Errorf("parsing release constraint %q: %v", constraint, err)
		}
		if !c.Check(r.Version) {
			return nil, fmt.Errorf("%s is release %s, which does not match %q", dir, r.Version, constraint)
		}
	}
	return r, nil
}

// WithFiles returns a release holding r's files plus every file of extra
// whose name r lacks, and the names it added, sorted. A file r already has
// wins: a release directory that ships a component's file overrides the
// component's own copy. r itself is not changed.
func (r *Release) WithFiles(extra []*File) (*Release, []string) {
	out := &Release{Version: r.Version, Source: r.Source, Origin: r.Origin, RPMs: r.RPMs, Development: r.Development,
		Build: r.Build, MicroShiftIO: r.MicroShiftIO, Resolved: r.Resolved, files: make(map[string]*File, len(r.files)+len(extra))}
	for n, f := range r.files {
		out.files[n] = f
	}
	var added []string
	for _, f := range extra {
		if _, ok := out.files[f.Name]; ok {
			continue
		}
		out.files[f.Name] = f
		added = append(added, f.Name)
	}
	sort.Strings(added)
	return out, added
}
