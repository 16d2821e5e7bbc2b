package compose

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/plan"
)

// checkSelection refuses a selection the release, the arch or the request
// cannot have: a component the arch or the release does not support, an
// RPM the release does not build, a component the release deploys anyway
// left out, conflicts, two providers of a capability, --lvmd or
// --storage-class without what reads them, and a plan that would not
// install MicroShift.
func checkSelection(_ context.Context, in *inputs, p soFar) (soFar, error) {
	cat, rel, req, facts := in.cat, in.rel, in.req, in.facts
	sel := selection(p.Plan)
	providers := map[string][]string{} // capability -> its selected providers
	for _, pc := range p.Components {
		for _, capName := range cat.Components[pc.Name].Provides {
			providers[capName] = append(providers[capName], pc.Name)
		}
	}
	selectedProviders := func(capName string) []string { return slices.Sorted(slices.Values(providers[capName])) }
	for _, pc := range p.Components {
		n := pc.Name
		c := cat.Components[n]
		if !c.SupportsArch(req.Arch) {
			return p, fmt.Errorf("component %q does not support %s, only %s (%s: %s)",
				n, req.Arch, joinArches(c.Arches), n, sel.why(n))
		}
		if !c.SupportsRelease(rel) && c.ForBuild(rel.Build) {
			return p, &CannotHonourError{fmt.Sprintf("component %q is not available for release %s: it needs release %s (%s: %s)",
				n, rel.Stream(), c.ReleaseRange(), n, sel.why(n))}
		}
		if why := Unavailable(c, rel, facts, in.know); why != "" {
			return p, &CannotHonourError{fmt.Sprintf("component %q is not available for release %s: %s (%s: %s)", n, rel, why, n, sel.why(n))}
		}
		for _, pkg := range c.Packages {
			if isMicroShiftPackage(pkg) && !facts.HasPackage(pkg) && c.RepositoryOf(pkg) == nil {
				have := ""
				if rg := facts.PackageRange(pkg); rg != "" {
					have = " (it exists in releases " + rg + ")"
				}
				return p, fmt.Errorf("component %q needs RPM %s, which MicroShift %s does not build%s (%s: %s)",
					n, pkg, rel.Stream(), have, n, sel.why(n))
			}
		}
	}
	// A component the release deploys whatever the config says cannot be
	// left out: the plan would describe a device that does not exist.
	for _, n := range cat.ComponentNames() {
		c := cat.Components[n]
		if sel.has(n) || c.AlwaysDeployed == "" || !c.SupportsArch(req.Arch) || !c.SupportsRelease(rel) {
			continue
		}
		how := fmt.Sprintf("profile %s leaves out %s", req.Profile, n)
		if slices.Contains(req.Without, n) {
			how = "--without " + n
		}
		return p, &CannotHonourError{fmt.Sprintf("%s, which release %s cannot honour: %s; select it (--with %s) or use a newer --release",
			how, rel.Stream(), c.AlwaysDeployed, n)}
	}
	for _, pc := range p.Components {
		n := pc.Name
		for _, x := range cat.Components[n].Conflicts {
			var hits []string
			if cat.Capabilities[x] != nil {
				hits = without(selectedProviders(x), n)
			} else if sel.has(x) {
				hits = []string{x}
			}
			if len(hits) > 0 {
				return p, fmt.Errorf("%s conflicts with %s (%s: %s; %s: %s); leave one out with --without",
					n, hits[0], n, sel.why(n), hits[0], sel.why(hits[0]))
			}
		}
	}
	if l := req.Lvmd; l != nil && l.Empty {
		why := "it has no device classes"
		if facts.Lvmd != nil {
			why = fmt.Sprintf("on MicroShift %s: %s", rel.Stream(), facts.Lvmd.EmptyFile)
		}
		return p, fmt.Errorf("--lvmd %s: the file is empty (no document): %s; list at least one device class, or drop --lvmd and MicroShift picks the host's volume group itself", l.Source, why)
	}
	if len(req.StorageClasses) > 0 && req.Lvmd == nil {
		return p, fmt.Errorf("--storage-class %q names a device class of --lvmd, which is not given", req.StorageClasses[0].Flag)
	}
	if req.Lvmd != nil && !sel.has(LVMSComponent) {
		return p, fmt.Errorf("--lvmd %s: %s is not in the plan, so nothing would read it; select it (--with %s, or profile storage-only or full) or drop --lvmd",
			req.Lvmd.Source, LVMSComponent, LVMSComponent)
	}
	for _, capName := range cat.CapabilityNames() {
		if ps := selectedProviders(capName); len(ps) > 1 {
			return p, fmt.Errorf("%s and %s both provide %s and a plan may have only one (%s: %s; %s: %s); leave one out with --without",
				ps[0], ps[1], capName, ps[0], sel.why(ps[0]), ps[1], sel.why(ps[1]))
		}
	}
	return p, checkInstallsMicroShift(in, p.Plan)
}

// checkInstallsMicroShift refuses a selection that would not install
// MicroShift at all (--without core): an empty plan, or one of add-ons
// only, describes a device that runs nothing.
func checkInstallsMicroShift(in *inputs, p *plan.Plan) error {
	cat, req := in.cat, in.req
	var order []string
	for _, pc := range p.Components {
		if slices.Contains(cat.Components[pc.Name].Packages, MicroShiftPackage) {
			return nil
		}
		order = append(order, pc.Name)
	}
	what := "profile " + req.Profile
	if len(req.Without) > 0 {
		what += " with --without " + strings.Join(sortedUnique(req.Without), ",")
	}
	needed := ""
	for _, n := range cat.ComponentNames() {
		if slices.Contains(cat.Components[n].Packages, MicroShiftPackage) {
			needed = fmt.Sprintf("; every plan needs %s (it installs the %s RPM)", n, MicroShiftPackage)
			break
		}
	}
	if len(order) == 0 {
		return fmt.Errorf("%s selects no components%s", what, needed)
	}
	return fmt.Errorf("%s does not install MicroShift: none of %s has the %s RPM%s", what, summarize(order, 10), MicroShiftPackage, needed)
}
