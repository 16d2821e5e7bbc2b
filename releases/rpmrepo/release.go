package rpmrepo

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/releases"
)

// Release is the release the release-info RPMs of one build hold.
type Release struct {
	Release *releases.Release
	// Files are the release files' bytes as the RPMs hold them, by name.
	Files map[string][]byte
	// RPMs name the packages, the core package first.
	RPMs []releases.RPM
}

// Assemble checks that pkgs (from[i] is where pkgs[i] was read from) are
// one build's release-info RPMs, the core package among them, no package
// twice, each component package of the core's version and release, and
// that the core files' release.base is the RPMs' version; and returns the
// release they hold.
func Assemble(pkgs []*Package, from []string) (*Release, error) {
	var core *Package
	for _, p := range pkgs {
		if p.NEVRA.Name == CorePackage {
			if core != nil {
				return nil, fmt.Errorf("two %s packages: %s and %s", CorePackage, core.NEVRA, p.NEVRA)
			}
			core = p
		}
	}
	if core == nil {
		var names []string
		for _, p := range pkgs {
			names = append(names, p.NEVRA.String())
		}
		return nil, fmt.Errorf("no %s package among %s: it holds release-<arch>.json, which every release needs", CorePackage, strings.Join(names, ", "))
	}
	out := &Release{Files: map[string][]byte{}}
	seen := map[string]bool{}
	ordered := []int{}
	for i, p := range pkgs {
		if p == core {
			ordered = append([]int{i}, ordered...)
		} else {
			ordered = append(ordered, i)
		}
	}
	var files []*releases.File
	for _, i := range ordered {
		p := pkgs[i]
		if seen[p.NEVRA.Name] {
			return nil, fmt.Errorf("%s is given twice", p.NEVRA.Name)
		}
		seen[p.NEVRA.Name] = true
		if p.NEVRA.EVR() != core.NEVRA.EVR() {
			return nil, fmt.Errorf("%s is not of the build of %s (version-release %s): release-info RPMs of one release have one version", p.NEVRA, core.NEVRA, core.NEVRA.EVR())
		}
		for _, f := range p.Files {
			files = append(files, f)
			out.Files[f.Name] = p.Raw[f.Name]
		}
		out.RPMs = append(out.RPMs, releases.RPM{NEVRA: p.NEVRA.String(), SHA256: p.SHA256, From: from[i]})
	}
	rel, err := releases.New(core.NEVRA.String(), files)
	if err != nil {
		return nil, err
	}
	// The version says the build: X.Y.Z is Red Hat's, microshift-io's
	// carries the build time, commit and OKD tag after it.
	build, iov, err := releases.BuildOfVersion(core.NEVRA.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", core.NEVRA, err)
	}
	want, err := semver.NewVersion(strings.ReplaceAll(core.NEVRA.Version, "~", "-"))
	if iov != nil {
		want, err = iov.Version, nil
	}
	if err != nil || want.Major() != rel.Version.Major() || want.Minor() != rel.Version.Minor() || want.Patch() != rel.Version.Patch() {
		return nil, fmt.Errorf("%s holds the release files of %s (release.base %s), not of its own version", core.NEVRA, rel.Version, rel.Base(rel.Arches()[0]))
	}
	if err := rel.SetBuild(build, iov); err != nil {
		return nil, err
	}
	rel.Origin = core.NEVRA.String()
	out.Release = rel
	return out, nil
}

// ReadFiles reads .rpm files (release import FILE.rpm ...) and assembles
// the release they hold; each file's absolute path is recorded as where
// its RPM came from.
func ReadFiles(paths []string) (*Release, error) {
	var pkgs []*Package
	var from []string
	for _, p := range paths {
		data, err := inputfile.Read("RPM", p, MaxRPMSize)
		if err != nil {
			return nil, err
		}
		pkg, err := ReadPackage(p, data)
		if err != nil {
			return nil, err
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			abs = p
		}
		pkgs = append(pkgs, pkg)
		from = append(from, abs)
	}
	return Assemble(pkgs, from)
}

// FromDownloads assembles the release of fetched packages.
func FromDownloads(ds []*Downloaded) (*Release, error) {
	pkgs := make([]*Package, len(ds))
	from := make([]string, len(ds))
	for i, d := range ds {
		pkgs[i], from[i] = d.Package, d.URL
	}
	return Assemble(pkgs, from)
}
