package compose

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/plan"
)

// addPackages adds the selected components' RPMs, with their versions,
// and the RPM repositories some come from.
func addPackages(_ context.Context, in *inputs, p soFar) (soFar, error) {
	byName := map[string]*plan.Package{}
	repos := map[string]*plan.Repository{}
	for _, pc := range p.Components {
		n := pc.Name
		c := in.cat.Components[n]
		for _, pkg := range c.Packages {
			if byName[pkg] == nil {
				byName[pkg] = &plan.Package{Name: pkg, Version: packageVersion(in, pkg, p.Release)}
				if c.RepositoryOf(pkg) != nil {
					byName[pkg].Version = ""
				}
			}
			byName[pkg].Components = append(byName[pkg].Components, n)
		}
		for _, repo := range c.Repositories {
			id := expandArch(repo.ID, in.req.Arch)
			url := expandArch(repo.BaseURL, in.req.Arch)
			have := repos[id]
			if have == nil {
				have = &plan.Repository{ID: id, Name: expandArch(repo.Name, in.req.Arch), BaseURL: url}
				repos[id] = have
			} else if have.BaseURL != url {
				return p, fmt.Errorf("components %s and %s name repository %s with different base URLs (%s, %s)",
					strings.Join(have.Components, ", "), n, id, have.BaseURL, url)
			}
			have.Components = append(have.Components, n)
			for _, pkg := range repo.Packages {
				if !slices.Contains(have.Packages, pkg) {
					have.Packages = append(have.Packages, pkg)
				}
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(byName)) {
		p.Packages = append(p.Packages, *byName[n])
	}
	for _, id := range slices.Sorted(maps.Keys(repos)) {
		repo := repos[id]
		slices.Sort(repo.Packages)
		p.Repositories = append(p.Repositories, *repo)
		p.Notes = append(p.Notes, fmt.Sprintf("%s: %s comes from the RPM repository %s (%s): add it to osbuild's sources (composer-cli sources add), and enable it on a bootc build host",
			strings.Join(repo.Components, ", "), strings.Join(repo.Packages, ", "), repo.ID, repo.BaseURL))
	}
	enabled, err := enabledRepositories(in, p.Plan)
	if err != nil {
		return p, err
	}
	for _, repo := range enabled {
		if repos[repo.ID] != nil {
			return p, fmt.Errorf("%s: repository %s is a component's repository too (%s): give it another ID", repo.Source, repo.ID, strings.Join(repos[repo.ID].Components, ", "))
		}
		p.Repositories = append(p.Repositories, repo)
		p.Notes = append(p.Notes, fmt.Sprintf("the RPM repository %s (%s, from %s): the Containerfile enables it; add it to osbuild's sources (composer-cli sources add) for the blueprint", repo.ID, repo.BaseURL, repo.Source))
	}
	if b := p.Release.Build; b != nil && len(in.req.RepoFiles) == 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%s: no OS image nor osbuild has a repository of its MicroShift RPMs: name it with --repo-file (%s)", b.Title, b.RPMSource))
	}
	return p, nil
}

// packageVersion pins the RPMs of MicroShift's spec, which require
// microshift = %{version} of each other: all to the release's version when
// its base is a published one (the RPMs whose release-info lists exactly
// the embedded images), or to the version-release of the recorded
// release-info RPMs of a build that versions its RPMs otherwise
// (microshift-io's X.Y.Z_..._OKD-TAG-1.el9, the form dnf matches exactly),
// else all to its major.minor.
func packageVersion(in *inputs, pkg string, rel plan.Release) string {
	switch {
	case !in.facts.HasPackage(pkg):
		return ""
	case rel.Pin == plan.PinExact && rel.Build != nil && rel.Build.Version != "":
		return rel.Build.Version
	case rel.Pin == plan.PinExact:
		return in.rel.Base(in.req.Arch)
	}
	return in.rel.Stream() + ".*"
}
