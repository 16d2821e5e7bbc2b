package compose

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// relatePackageFiles relates the files the plan's RPMs install under /etc
// (release knowledge: each RPM's %files) to the plan. A plan file never
// replaces one: the RPM's own would be overwritten and rpm -V would flag
// it. And where an RPM of the plan reads drop-ins (the observability
// collector's scrape_config_files), the notes say which files it takes:
// those of the plan's RPMs (the metrics components' scrape configs) and the
// plan's own; where the reader is left out, which RPMs install files only
// it reads.
func relatePackageFiles(_ context.Context, in *inputs, p soFar) (soFar, error) {
	byPackage := map[string][]string{} // the plan's RPMs -> their components
	for _, pkg := range p.Packages {
		byPackage[pkg.Name] = pkg.Components
	}
	installed := map[string]string{} // path -> the plan's RPM installing it
	var paths []string
	for _, pf := range in.facts.PackageFiles {
		if _, ok := byPackage[pf.Package]; ok {
			installed[pf.Path] = pf.Package
			paths = append(paths, pf.Path)
		}
	}
	slices.Sort(paths)
	for _, f := range p.Files {
		if pkg, ok := installed[f.Path]; ok {
			by := "the plan"
			if f.Component != "" {
				by = "component " + f.Component
			}
			return p, fmt.Errorf("%s places %s, which the %s RPM (%s) installs on MicroShift %s: the plan's file would replace the RPM's; place it elsewhere or leave out %s",
				by, f.Path, pkg, strings.Join(byPackage[pkg], ", "), in.rel.Stream(), strings.Join(byPackage[pkg], ", "))
		}
	}
	for _, rd := range in.facts.PackageReads {
		readers, selected := byPackage[rd.Package]
		var read []string // notes' "what from where"
		for _, pth := range paths {
			if ok, _ := path.Match(rd.Glob, pth); ok && installed[pth] != rd.Package {
				pkg := installed[pth]
				read = append(read, fmt.Sprintf("%s (the %s RPM of %s)", pth, pkg, strings.Join(byPackage[pkg], ", ")))
			}
		}
		for _, f := range p.Files {
			if ok, _ := path.Match(rd.Glob, f.Path); ok {
				read = append(read, fmt.Sprintf("%s (%s)", f.Path, orPlan(f.Component)))
			}
		}
		if len(read) == 0 {
			continue
		}
		if selected {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: the %s RPM reads %s (%s in %s): %s",
				strings.Join(readers, ", "), rd.Package, rd.Glob, rd.Key, rd.File, strings.Join(read, ", ")))
			continue
		}
		it := text.Plural(len(read), "it", "them")
		with := ""
		if cs := providersOfPackage(in, rd.Package); len(cs) > 0 {
			with = fmt.Sprintf("; --with %s reads %s", cs[0], it)
		}
		p.Notes = append(p.Notes, fmt.Sprintf("%s: for the %s RPM's %s (%s), which the plan leaves out, so nothing reads %s%s",
			strings.Join(read, ", "), rd.Package, rd.Key, rd.Glob, it, with))
	}
	return p, nil
}

// providersOfPackage lists the catalog components available for the plan's
// release and arch that install pkg.
func providersOfPackage(in *inputs, pkg string) []string {
	var out []string
	for _, n := range in.cat.ComponentNames() {
		c := in.cat.Components[n]
		if c.SupportsArch(in.req.Arch) && c.SupportsRelease(in.rel) && slices.Contains(c.Packages, pkg) {
			out = append(out, n)
		}
	}
	return out
}

func orPlan(component string) string {
	if component == "" {
		return "the plan's"
	}
	return "component " + component
}
