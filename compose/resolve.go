package compose

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// Request is what the user asked for.
type Request struct {
	Profile string
	With    []string
	Without []string
	Arch    releases.Arch
	// Config is the user's config.yaml, nil for none.
	Config *microshiftconfig.Config
	// AllowUnpinned turns tag-only image references from errors into warnings.
	AllowUnpinned bool
	// AllowRedBoot turns a selection whose device can never become healthy
	// (greenboot marks every boot red and rolls back) from an error into a
	// warning.
	AllowRedBoot bool
	// Lvmd is the user's lvmd.yaml for LVMS, nil for none.
	Lvmd *lvmdconfig.Config
	// StorageClasses are the user's choices of name and filesystem for
	// the StorageClasses of Lvmd's device classes (--storage-class).
	StorageClasses []lvmdconfig.ClassChoice
	// PluginTimeout bounds each plugin invocation; 0 is plugin.DefaultTimeout.
	PluginTimeout time.Duration
	// Distro is the osbuild distro to build for, one the release is built
	// for; "" is the release's default.
	Distro string
	// BootcBase overrides the distro's bootc base image.
	BootcBase string
	// ExactVersion refuses a release whose base is no published RPM
	// version (a nightly or a candidate) instead of pinning the RPMs to
	// its stream with a warning.
	ExactVersion bool
	// UpgradeFrom, when set, is the release whose data the device holds:
	// a release that does not take it over is refused.
	UpgradeFrom *semver.Version
	// HealthCheck is how the device's greenboot check waits for the
	// workloads of the rendered manifests.
	HealthCheck HealthCheckOptions
	// StrictRelease refuses a release newer than every release the
	// knowledge data knows, instead of building it with the newest known
	// release's rules and a warning.
	StrictRelease bool
	// Hardening is the device's FIPS mode, kernel arguments and CIS
	// profile (--fips, --karg, --cis).
	Hardening HardeningOptions
}

// LVMSComponent is the component --lvmd configures.
const LVMSComponent = "storage-lvms"

// CannotHonourError is a selection the target release cannot honour: a
// component it does not ship, or one it deploys whatever the plan says.
// The message names the release, the component and what the release
// supports.
type CannotHonourError struct{ msg string }

func (e *CannotHonourError) Error() string { return e.msg }

// ErrNewerRelease is wrapped by the error for a release newer than the
// tool knows, with Request.StrictRelease.
var ErrNewerRelease = errors.New("release is newer than the releases microshift-compose knows")

// ErrUnpinned is wrapped by the error for a tag-only image reference.
var ErrUnpinned = errors.New("image is not pinned by digest")

// ErrRedBoot is wrapped by the error for a selection whose device can
// never become healthy: greenboot marks every boot red and rolls back.
// Request.AllowRedBoot accepts it.
var ErrRedBoot = errors.New("the device never becomes healthy")

// Resolve selects components for req and builds the Plan: selection and the
// reasons for it, capability providers, conflicts, arch and release checks,
// images with digests, merged config, device files, packages, services and
// firewall, and the rendered manifests of components that have them (their
// plugins run here).
func Resolve(ctx context.Context, cat *components.Catalog, rel *releases.Release, req Request) (*plan.Plan, error) {
	r, p, err := newResolver(ctx, cat, rel, req)
	if err != nil {
		return nil, err
	}
	files, err := r.deviceFiles(p)
	if err != nil {
		return nil, err
	}
	rendered, err := r.addManifests(ctx, p)
	if err != nil {
		return nil, err
	}
	if rendered, err = r.addHealthCheck(p, rendered); err != nil {
		return nil, err
	}
	if err := setFiles(p, append(files, rendered...)); err != nil {
		return nil, err
	}
	r.warnUnused(p)
	if err := r.addPackages(p); err != nil {
		return nil, err
	}
	if err := r.relatePackageFiles(p); err != nil {
		return nil, err
	}
	r.addServicesAndFirewall(p)
	if err := setInputs(p, cat.Digest, rel, r.know.Digest, req); err != nil {
		return nil, err
	}
	return p, nil
}

// newResolver selects components and starts the plan: images and config.
func newResolver(ctx context.Context, cat *components.Catalog, rel *releases.Release, req Request) (*resolver, *plan.Plan, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	know, err := knowledge.Default()
	if err != nil {
		return nil, nil, fmt.Errorf("loading release knowledge: %w", err)
	}
	facts, err := know.For(rel.Version)
	if err != nil {
		return nil, nil, fmt.Errorf("release %s: %w", rel, err)
	}
	if facts.Newer && req.StrictRelease {
		return nil, nil, fmt.Errorf("release %s: %w (the newest is %s; --strict-release refuses it, without it %s's rules are applied with a warning; '%s' refreshes the knowledge)", rel, ErrNewerRelease, facts.Rules, facts.Rules, knowledge.RefreshCommand)
	}
	// From here on the catalog is as it is for this release: each
	// component's [[variant]] for it applied.
	cat = cat.ForRelease(rel.Version)
	rel, own := cat.WithReleaseFiles(rel)
	r := &resolver{cat: cat, rel: rel, req: req, know: know, facts: facts, reasons: map[string][]plan.Reason{}, ownFiles: own,
		reasonSet: map[string]map[plan.Reason]bool{}, providers: map[string][]string{}, without_: map[string]bool{}}
	for _, n := range req.Without {
		r.without_[n] = true
	}
	if err := r.checkRequest(); err != nil {
		return nil, nil, err
	}
	target, err := r.target()
	if err != nil {
		return nil, nil, err
	}
	version, err := r.version()
	if err != nil {
		return nil, nil, err
	}
	upgrade, err := r.checkUpgrade()
	if err != nil {
		return nil, nil, err
	}
	if err := r.selectComponents(); err != nil {
		return nil, nil, err
	}
	if err := r.checkSelection(); err != nil {
		return nil, nil, err
	}
	if err := r.checkInstallsMicroShift(); err != nil {
		return nil, nil, err
	}
	hard, err := r.hardening(target)
	if err != nil {
		return nil, nil, err
	}
	p := r.newPlan()
	p.Target = target
	p.Hardening = hard
	p.Release.Kind, p.Release.Pin = version.kind, version.pin
	p.Release.UpgradeFrom = upgrade
	p.Release.Rules = facts.Rules
	if facts.Newer {
		p.Warnings = append(p.Warnings, facts.NewerWarning())
	}
	if version.warning != "" {
		p.Warnings = append(p.Warnings, version.warning)
	}
	r.addHardeningNotes(p)
	if err := r.addCapabilityWarnings(p); err != nil {
		return nil, nil, err
	}
	if err := r.addImages(p); err != nil {
		return nil, nil, err
	}
	if err := r.addConfig(p); err != nil {
		return nil, nil, err
	}
	return r, p, nil
}

type resolver struct {
	cat     *components.Catalog
	rel     *releases.Release
	req     Request
	know    *knowledge.Knowledge
	facts   *knowledge.Release
	reasons map[string][]plan.Reason // selected component -> why
	order   []string                 // selected, apply order
	// reasonSet holds each selected component's reasons for lookups;
	// providers the selected providers of each capability; queue the
	// components selected but not yet expanded.
	reasonSet map[string]map[plan.Reason]bool
	providers map[string][]string
	queue     []string
	without_  map[string]bool
	// claimed indexes, per release file component, the keys the catalog
	// claims; checked lists the files already checked.
	claimed map[string]map[string]bool
	checked map[string]bool
	keys    map[string]map[string]string // release file -> key -> reference
	// ownFiles are the release files components brought themselves that
	// rel lacked (file name -> component).
	ownFiles map[string]string
}

func (r *resolver) checkRequest() error {
	if r.req.Profile == "" {
		return errors.New("no profile given (have " + strings.Join(r.cat.ProfileNames(), ", ") + ")")
	}
	if r.cat.Profiles[r.req.Profile] == nil {
		names := r.cat.ProfileNames()
		if m := suggest.Closest(r.req.Profile, names); m != "" {
			return fmt.Errorf("unknown profile %q; did you mean %q?", r.req.Profile, m)
		}
		return fmt.Errorf("unknown profile %q (have %s)", r.req.Profile, strings.Join(names, ", "))
	}
	if r.rel.File("", r.req.Arch) == nil {
		return fmt.Errorf("release %s has no %s: it does not ship %s", r.rel, releases.FileName("", r.req.Arch), r.req.Arch)
	}
	seen := map[string]string{}
	for _, flag := range []struct {
		name  string
		names []string
	}{{"--with", r.req.With}, {"--without", r.req.Without}} {
		for _, n := range flag.names {
			if r.cat.Components[n] == nil {
				if r.cat.Capabilities[n] != nil {
					return fmt.Errorf("%s %s: %q is a capability; name a component that provides it (%s)",
						flag.name, n, n, strings.Join(r.cat.Providers(n), ", "))
				}
				if m := suggest.Closest(n, r.cat.ComponentNames()); m != "" {
					return fmt.Errorf("%s: unknown component %q; did you mean %q?", flag.name, n, m)
				}
				return fmt.Errorf("%s: unknown component %q (see 'microshift-compose components')", flag.name, n)
			}
			if prev, dup := seen[n]; dup && prev != flag.name {
				return fmt.Errorf("component %q is given to both --with and --without", n)
			}
			seen[n] = flag.name
		}
	}
	return nil
}

func (r *resolver) without(n string) bool { return r.without_[n] }

// add records why n is in the selection and reports whether n is new
// there; a reason already recorded is not added twice.
func (r *resolver) add(n string, why plan.Reason) bool {
	set, had := r.reasonSet[n]
	if !had {
		set = map[plan.Reason]bool{}
		r.reasonSet[n] = set
		r.queue = append(r.queue, n)
		for _, capName := range r.cat.Components[n].Provides {
			r.providers[capName] = append(r.providers[capName], n)
		}
	}
	if !set[why] {
		set[why] = true
		r.reasons[n] = append(r.reasons[n], why)
	}
	return !had
}

// capabilityNeed is a selected component requiring a capability.
type capabilityNeed struct{ capability, by string }

// selectComponents starts from the profile and --with, then adds required
// components and default capability providers until nothing changes: a
// worklist, so each component and requirement is looked at once.
func (r *resolver) selectComponents() error {
	for _, n := range r.cat.Profiles[r.req.Profile].Components {
		if !r.without(n) {
			r.add(n, plan.Reason{Kind: plan.ReasonProfile, Profile: r.req.Profile})
		}
	}
	for _, n := range r.req.With {
		r.add(n, plan.Reason{Kind: plan.ReasonWith})
	}
	var needs []capabilityNeed
	for {
		for len(r.queue) > 0 {
			n := r.queue[0]
			r.queue = r.queue[1:]
			for _, req := range r.cat.Components[n].Requires {
				if r.cat.Components[req] == nil {
					needs = append(needs, capabilityNeed{req, n})
					continue
				}
				if r.without(req) {
					return fmt.Errorf("--without %s: %s requires it (%s: %s)", req, n, n, r.why(n))
				}
				r.add(req, plan.Reason{Kind: plan.ReasonRequired, By: n})
			}
		}
		// Only once the component closure is stable, so that a provider
		// selected some other way is seen before a default is pulled in.
		// The first unmet need (by requiring component, then declaration)
		// pulls in its default; the closure then runs again.
		sort.SliceStable(needs, func(i, j int) bool { return needs[i].by < needs[j].by })
		unmet := slices.IndexFunc(needs, func(nd capabilityNeed) bool { return len(r.providers[nd.capability]) == 0 })
		if unmet < 0 {
			break
		}
		nd := needs[unmet]
		needs = slices.Delete(needs, 0, unmet+1)
		capa := r.cat.Capabilities[nd.capability]
		if r.cat.Components[capa.Default] == nil {
			// Catalog validation allows a capability without a default
			// only when nothing provides it.
			return fmt.Errorf("%s requires a %s provider and no component in the catalog provides %s (%s: %s); add one with --catalog",
				nd.by, nd.capability, nd.capability, nd.by, r.why(nd.by))
		}
		if r.without(capa.Default) {
			others := without(r.cat.Providers(nd.capability), capa.Default)
			hint := ""
			if len(others) > 0 {
				hint = fmt.Sprintf("; select another provider with --with %s", strings.Join(others, " or --with "))
			}
			return fmt.Errorf("--without %s: %s requires a %s provider and %s is its default (%s: %s)%s",
				capa.Default, nd.by, nd.capability, capa.Default, nd.by, r.why(nd.by), hint)
		}
		r.add(capa.Default, plan.Reason{Kind: plan.ReasonCapability, Capability: nd.capability, By: nd.by})
	}
	for n := range r.reasons {
		sortReasons(r.reasons[n])
	}
	// ComponentNames is already in apply order (order, then name).
	r.order = make([]string, 0, len(r.reasons))
	for _, n := range r.cat.ComponentNames() {
		if _, ok := r.reasons[n]; ok {
			r.order = append(r.order, n)
		}
	}
	return nil
}

// sortReasons puts a component's reasons in one order whatever the order
// they were found in: the profile, --with, then requirements by component.
func sortReasons(rs []plan.Reason) {
	rank := map[string]int{plan.ReasonProfile: 0, plan.ReasonWith: 1, plan.ReasonRequired: 2, plan.ReasonCapability: 3}
	sort.SliceStable(rs, func(i, j int) bool {
		if rank[rs[i].Kind] != rank[rs[j].Kind] {
			return rank[rs[i].Kind] < rank[rs[j].Kind]
		}
		if rs[i].By != rs[j].By {
			return rs[i].By < rs[j].By
		}
		return rs[i].Capability < rs[j].Capability
	})
}

func (r *resolver) selectedProviders(capName string) []string {
	return slices.Sorted(slices.Values(r.providers[capName]))
}

// why explains how n got into the selection, following requirements back to
// the profile or --with: "required by sriov <- --with".
func (r *resolver) why(n string) string {
	var parts []string
	seen := map[string]bool{}
	for cur := n; !seen[cur]; {
		seen[cur] = true
		rs := r.reasons[cur]
		if len(rs) == 0 {
			break
		}
		why := rs[0]
		parts = append(parts, why.String())
		if why.By == "" {
			break
		}
		cur = why.By
	}
	return strings.Join(parts, " <- ")
}

func (r *resolver) checkSelection() error {
	for _, n := range r.order {
		c := r.cat.Components[n]
		if !c.SupportsArch(r.req.Arch) {
			return fmt.Errorf("component %q does not support %s, only %s (%s: %s)",
				n, r.req.Arch, joinArches(c.Arches), n, r.why(n))
		}
		if !c.SupportsRelease(r.rel) {
			return &CannotHonourError{fmt.Sprintf("component %q is not available for release %s: it needs release %s (%s: %s)",
				n, r.rel.Stream(), c.ReleaseRange(), n, r.why(n))}
		}
		for _, pkg := range c.Packages {
			if isMicroShiftPackage(pkg) && !r.facts.HasPackage(pkg) && c.RepositoryOf(pkg) == nil {
				have := ""
				if rg := r.facts.PackageRange(pkg); rg != "" {
					have = " (it exists in releases " + rg + ")"
				}
				return fmt.Errorf("component %q needs RPM %s, which MicroShift %s does not build%s (%s: %s)",
					n, pkg, r.rel.Stream(), have, n, r.why(n))
			}
		}
	}
	// A component the release deploys whatever the config says cannot be
	// left out: the plan would describe a device that does not exist.
	for _, n := range r.cat.ComponentNames() {
		c := r.cat.Components[n]
		if _, selected := r.reasons[n]; selected || c.AlwaysDeployed == "" || !c.SupportsArch(r.req.Arch) || !c.SupportsRelease(r.rel) {
			continue
		}
		how := fmt.Sprintf("profile %s leaves out %s", r.req.Profile, n)
		if r.without(n) {
			how = "--without " + n
		}
		return &CannotHonourError{fmt.Sprintf("%s, which release %s cannot honour: %s; select it (--with %s) or use a newer --release",
			how, r.rel.Stream(), c.AlwaysDeployed, n)}
	}
	for _, n := range r.order {
		for _, x := range r.cat.Components[n].Conflicts {
			var hits []string
			if r.cat.Capabilities[x] != nil {
				hits = without(r.selectedProviders(x), n)
			} else if _, ok := r.reasons[x]; ok {
				hits = []string{x}
			}
			if len(hits) > 0 {
				return fmt.Errorf("%s conflicts with %s (%s: %s; %s: %s); leave one out with --without",
					n, hits[0], n, r.why(n), hits[0], r.why(hits[0]))
			}
		}
	}
	if l := r.req.Lvmd; l != nil && l.Empty {
		why := "it has no device classes"
		if r.facts.Lvmd != nil {
			why = fmt.Sprintf("on MicroShift %s: %s", r.rel.Stream(), r.facts.Lvmd.EmptyFile)
		}
		return fmt.Errorf("--lvmd %s: the file is empty (no document): %s; list at least one device class, or drop --lvmd and MicroShift picks the host's volume group itself", l.Source, why)
	}
	if len(r.req.StorageClasses) > 0 && r.req.Lvmd == nil {
		return fmt.Errorf("--storage-class %q names a device class of --lvmd, which is not given", r.req.StorageClasses[0].Flag)
	}
	if r.req.Lvmd != nil {
		if _, ok := r.reasons[LVMSComponent]; !ok {
			return fmt.Errorf("--lvmd %s: %s is not in the plan, so nothing would read it; select it (--with %s, or profile storage-only or full) or drop --lvmd",
				r.req.Lvmd.Source, LVMSComponent, LVMSComponent)
		}
	}
	for _, capName := range r.cat.CapabilityNames() {
		if ps := r.selectedProviders(capName); len(ps) > 1 {
			return fmt.Errorf("%s and %s both provide %s and a plan may have only one (%s: %s; %s: %s); leave one out with --without",
				ps[0], ps[1], capName, ps[0], r.why(ps[0]), ps[1], r.why(ps[1]))
		}
	}
	return nil
}

// MicroShiftPackage is the RPM every plan installs: MicroShift itself.
const MicroShiftPackage = "microshift"

// checkInstallsMicroShift refuses a selection that would not install
// MicroShift at all (--without core): an empty plan, or one of add-ons
// only, describes a device that runs nothing.
func (r *resolver) checkInstallsMicroShift() error {
	for _, n := range r.order {
		if slices.Contains(r.cat.Components[n].Packages, MicroShiftPackage) {
			return nil
		}
	}
	what := "profile " + r.req.Profile
	if len(r.req.Without) > 0 {
		what += " with --without " + strings.Join(sortedUnique(r.req.Without), ",")
	}
	needed := ""
	for _, n := range r.cat.ComponentNames() {
		if slices.Contains(r.cat.Components[n].Packages, MicroShiftPackage) {
			needed = fmt.Sprintf("; every plan needs %s (it installs the %s RPM)", n, MicroShiftPackage)
			break
		}
	}
	if len(r.order) == 0 {
		return fmt.Errorf("%s selects no components%s", what, needed)
	}
	return fmt.Errorf("%s does not install MicroShift: none of %s has the %s RPM%s", what, summarize(r.order, 10), MicroShiftPackage, needed)
}

// releaseRPMs are the release's RPMs as the lock names them: NEVRA and
// checksum, not where they were read from (that differs between machines).
func releaseRPMs(rpms []releases.RPM) []plan.ReleaseRPM {
	var out []plan.ReleaseRPM
	for _, r := range rpms {
		out = append(out, plan.ReleaseRPM{NEVRA: r.NEVRA, SHA256: r.SHA256})
	}
	return out
}

func (r *resolver) newPlan() *plan.Plan {
	p := &plan.Plan{
		Schema: plan.Schema,
		Release: plan.Release{
			Version:    r.rel.Version.String(),
			Stream:     r.rel.Stream(),
			Base:       r.rel.Base(r.req.Arch),
			Kubernetes: r.facts.Kubernetes,
			Distro:     r.facts.Distro,
			Source:     r.rel.Source,
			Origin:     r.rel.Origin,
			RPMs:       releaseRPMs(r.rel.RPMs),
		},
		Arch:         string(r.req.Arch),
		Profile:      r.req.Profile,
		With:         sortedUnique(r.req.With),
		Without:      sortedUnique(r.req.Without),
		Capabilities: map[string]string{},
	}
	for _, n := range r.order {
		c := r.cat.Components[n]
		p.Components = append(p.Components, plan.Component{
			Name:        n,
			Order:       c.Order,
			Description: c.Description,
			Provides:    nonNil(c.Provides),
			Reasons:     r.reasons[n],
		})
		for _, capName := range c.Provides {
			p.Capabilities[capName] = n
		}
	}
	return p
}

// addImages looks every selected component's image keys up in the release
// file for the plan's arch.
func (r *resolver) addImages(p *plan.Plan) error {
	byRef := map[string]*plan.Image{}
	type tagOnly struct{ where, ref string }
	var unpinned []tagOnly
	for _, n := range r.order {
		c := r.cat.Components[n]
		if len(c.Images.Keys) == 0 {
			continue
		}
		f := r.rel.File(c.Images.File, r.req.Arch)
		if f == nil {
			from := ""
			if c.Images.From != "" {
				from = "; it comes with " + c.Images.From + ": add it to the release directory (--release-dir) or the component's release/ directory (--catalog)"
			}
			return fmt.Errorf("release %s has no %s, which component %q takes its images from%s",
				r.rel, releases.FileName(c.Images.File, r.req.Arch), n, from)
		}
		if err := r.checkClaimed(f); err != nil {
			return err
		}
		index := r.keyIndex(f)
		for _, k := range c.Images.Keys {
			ref, ok := index[k]
			if !ok {
				return fmt.Errorf("release %s: %s has no image key %q that component %q needs", r.rel, f.Name, k, n)
			}
			im := byRef[ref]
			if im == nil {
				// The release parser has checked every reference, and a
				// valid reference holds "@" only before its digest: no
				// second parse per image.
				im = &plan.Image{Ref: ref, Pinned: strings.Contains(ref, "@")}
				byRef[ref] = im
				if !im.Pinned {
					unpinned = append(unpinned, tagOnly{fmt.Sprintf("component %q image %q (%s)", n, k, f.Name), ref})
				}
			}
			im.Uses = append(im.Uses, plan.ImageUse{Component: n, File: f.Name, Key: k})
		}
	}
	if len(unpinned) > 0 {
		if !r.req.AllowUnpinned {
			more, them := "", "it"
			if len(unpinned) > 1 {
				more, them = fmt.Sprintf(" (and %d more tag-only images)", len(unpinned)-1), "them"
			}
			return fmt.Errorf("%s: %w: %s%s; pin %s in the release file, or pass --allow-unpinned to embed %s by tag",
				unpinned[0].where, ErrUnpinned, unpinned[0].ref, more, them, them)
		}
		for _, u := range unpinned {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s is not pinned by digest: %s (allowed by --allow-unpinned; the device may not boot offline reproducibly)", u.where, u.ref))
		}
	}
	for _, ref := range slices.Sorted(maps.Keys(byRef)) {
		p.Images = append(p.Images, *byRef[ref])
	}
	noted := map[string]bool{}
	for _, n := range r.order {
		c := r.cat.Components[n]
		name := releases.FileName(c.Images.File, r.req.Arch)
		if from, ok := r.ownFiles[name]; ok && len(c.Images.Keys) > 0 && !noted[name] {
			noted[name] = true
			p.Notes = append(p.Notes, fmt.Sprintf("%s comes from component %s: release %s does not ship it", name, from, r.rel))
		}
	}
	return nil
}

// keyIndex maps a release file's keys to their references, built once per
// file: components look their keys up in it.
func (r *resolver) keyIndex(f *releases.File) map[string]string {
	if r.keys == nil {
		r.keys = map[string]map[string]string{}
	}
	index, ok := r.keys[f.Name]
	if !ok {
		index = make(map[string]string, len(f.Images))
		for _, im := range f.Images {
			index[im.Key] = im.Ref
		}
		r.keys[f.Name] = index
	}
	return index
}

// checkClaimed refuses a release file with keys no catalog component claims:
// those are images the device would boot without. The claims of every
// release file are indexed once, on the first file checked.
func (r *resolver) checkClaimed(f *releases.File) error {
	if r.claimed == nil {
		r.claimed = map[string]map[string]bool{}
		for _, c := range r.cat.Components {
			if !c.SupportsRelease(r.rel) {
				continue
			}
			keys := r.claimed[c.Images.File]
			if keys == nil {
				keys = map[string]bool{}
				r.claimed[c.Images.File] = keys
			}
			for _, k := range c.Images.Keys {
				keys[k] = true
			}
		}
		r.checked = map[string]bool{}
	}
	if r.checked[f.Name] {
		return nil
	}
	r.checked[f.Name] = true
	for _, im := range f.Images {
		if !r.claimed[f.Component][im.Key] {
			return fmt.Errorf("release %s: %s: image key %q is not claimed by any component, so no plan would embed it; add it to a component's images.keys (see --catalog)",
				r.rel, f.Name, im.Key)
		}
	}
	return nil
}

func (r *resolver) addPackages(p *plan.Plan) error {
	byName := map[string]*plan.Package{}
	repos := map[string]*plan.Repository{}
	for _, n := range r.order {
		c := r.cat.Components[n]
		for _, pkg := range c.Packages {
			if byName[pkg] == nil {
				byName[pkg] = &plan.Package{Name: pkg, Version: r.packageVersion(pkg, p.Release.Pin)}
				if c.RepositoryOf(pkg) != nil {
					byName[pkg].Version = ""
				}
			}
			byName[pkg].Components = append(byName[pkg].Components, n)
		}
		for _, repo := range c.Repositories {
			id := expandArch(repo.ID, r.req.Arch)
			url := expandArch(repo.BaseURL, r.req.Arch)
			have := repos[id]
			if have == nil {
				have = &plan.Repository{ID: id, Name: expandArch(repo.Name, r.req.Arch), BaseURL: url}
				repos[id] = have
			} else if have.BaseURL != url {
				return fmt.Errorf("components %s and %s name repository %s with different base URLs (%s, %s)",
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
	return nil
}

// expandArch replaces dnf's $basearch with the plan's arch.
func expandArch(s string, arch releases.Arch) string {
	return strings.ReplaceAll(s, "$basearch", string(arch))
}

// packageVersion pins the RPMs of MicroShift's spec, which require
// microshift = %{version} of each other: all to the release's version when
// its base is a published one (the RPMs whose release-info lists exactly
// the embedded images), else all to its major.minor.
func (r *resolver) packageVersion(pkg, pin string) string {
	switch {
	case !r.facts.HasPackage(pkg):
		return ""
	case pin == plan.PinExact:
		return r.rel.Base(r.req.Arch)
	}
	return r.rel.Stream() + ".*"
}

// isMicroShiftPackage reports whether pkg is built from MicroShift's spec.
func isMicroShiftPackage(pkg string) bool {
	return pkg == "microshift" || strings.HasPrefix(pkg, "microshift-")
}

// addCapabilityWarnings says what the device does without a provider of a
// capability, where the release knowledge knows it (no CNI: greenboot red).
// A device that can never become healthy without it (no CNI on 4.18) is
// refused unless the request accepts it.
func (r *resolver) addCapabilityWarnings(p *plan.Plan) error {
	for _, capName := range r.cat.CapabilityNames() {
		if _, ok := p.Capabilities[capName]; ok {
			continue
		}
		w, ok := r.facts.MissingCapability(capName)
		if !ok {
			continue
		}
		if !w.RedBoot {
			p.Warnings = append(p.Warnings, w.Warning)
			continue
		}
		if !r.req.AllowRedBoot {
			add := ""
			if d := r.cat.Capabilities[capName].Default; d != "" {
				add = " (--with " + d + ")"
			}
			return fmt.Errorf("release %s: %w: %s; add a %s provider%s, or pass --allow-red-boot to build a device that rolls back on every boot",
				r.rel.Stream(), ErrRedBoot, w.Warning, capName, add)
		}
		p.Warnings = append(p.Warnings, w.Warning+" (built anyway: --allow-red-boot)")
	}
	return nil
}

func (r *resolver) addServicesAndFirewall(p *plan.Plan) {
	params := r.req.Config.Params()
	enabled, disabled := map[string]bool{}, map[string]bool{}
	ports, services, sources := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, n := range r.order {
		c := r.cat.Components[n]
		for _, s := range c.Services.Enabled {
			enabled[s] = true
		}
		for _, s := range c.Services.Disabled {
			disabled[s] = true
		}
		for _, port := range c.Firewall.Ports {
			spec, proto, _ := strings.Cut(port, ":")
			if spec == components.NodePortsPort {
				spec = params.ServiceNodePortRange
			}
			ports[spec+":"+proto] = true
		}
		for _, s := range c.Firewall.Services {
			services[s] = true
		}
		for _, s := range c.Firewall.TrustedSources {
			if s == components.ClusterNetworkSource {
				for _, cidr := range params.ClusterNetwork {
					sources[cidr] = true
				}
				continue
			}
			sources[s] = true
		}
	}
	if h := p.Hardening; h != nil && h.CIS != nil {
		enabled[CISAuditUnit] = true
	}
	for s := range enabled {
		// A unit one component needs running wins over another's wish to
		// disable it; dropping the disable keeps the device bootable.
		delete(disabled, s)
	}
	p.Services = plan.Services{Enabled: slices.Sorted(maps.Keys(enabled)), Disabled: slices.Sorted(maps.Keys(disabled))}
	p.Firewall = plan.Firewall{Ports: sortPorts(slices.Sorted(maps.Keys(ports))), Services: slices.Sorted(maps.Keys(services)), TrustedSources: slices.Sorted(maps.Keys(sources))}
}

func joinArches(as []releases.Arch) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}

func without(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

func sortedUnique(list []string) []string {
	set := map[string]bool{}
	for _, s := range list {
		set[s] = true
	}
	return slices.Sorted(maps.Keys(set))
}

func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// sortPorts orders "port:proto" entries by port number, then protocol, the
// way people read firewall rules (80 before 443 before 6443).
func sortPorts(ports []string) []string {
	num := func(p string) int {
		n := 0
		for _, r := range p {
			if r < '0' || r > '9' {
				break
			}
			n = n*10 + int(r-'0')
		}
		return n
	}
	sort.SliceStable(ports, func(i, j int) bool {
		if a, b := num(ports[i]), num(ports[j]); a != b {
			return a < b
		}
		return ports[i] < ports[j]
	})
	return ports
}
