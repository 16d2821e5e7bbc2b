package compose

import (
	"context"
	"slices"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// Resolve selects components for req and builds the Plan: selection and the
// reasons for it, capability providers, conflicts, arch and release checks,
// images with digests, merged config, device files, packages, services and
// firewall, and the rendered manifests of components that have them (their
// plugins run here). It runs steps, in order, on the plan so far; the first
// error ends it.
func Resolve(ctx context.Context, cat *components.Catalog, rel *releases.Release, req Request) (*plan.Plan, error) {
	in, err := newInputs(ctx, cat, rel, req)
	if err != nil {
		return nil, err
	}
	p, err := runSteps(ctx, in, steps)
	if err != nil {
		return nil, err
	}
	return p.Plan, nil
}

// step is one named step of Resolve: it reads the inputs, adds to the plan
// so far, or refuses it.
type step struct {
	name string
	run  func(ctx context.Context, in *inputs, p soFar) (soFar, error)
}

// steps are Resolve's steps in the order they run: each one's file is
// step_<name>.go. The order is the plan's: warnings and notes are in the
// order the steps add them, and of two refusals the earlier step's is the
// one reported.
var steps = []step{
	{"request", startPlan},                  // the request checked; what it asked for and the release
	{"target", chooseTarget},                // the distro and bootc base
	{"version", pinVersion},                 // how MicroShift's RPMs are pinned
	{"upgrade", checkUpgrade},               // the release the device upgrades from
	{"select", selectComponents},            // components and why, capability providers
	{"check", checkSelection},               // arch, release, conflicts, --lvmd, MicroShift installed
	{"hardening", resolveHardening},         // FIPS, kernel arguments, CIS
	{"capabilities", addCapabilityWarnings}, // what the device does without a provider
	{"images", addImages},                   // the release files' images, by digest
	{"operators", addOperators},             // the operator set, its filtered catalog and images
	{stepConfig, addConfig},                 // the merged MicroShift config
	{"devicefiles", addDeviceFiles},         // lvmd.yaml and the components' files
	{"manifests", addManifests},             // kustomize-rendered manifests.d, images cross-checked
	{"files", setFiles},                     // those files in path order, with digests
	{"unused", warnUnused},                  // images embedded that nothing uses
	{"packages", addPackages},               // RPMs, versions and repositories
	{"packagefiles", relatePackageFiles},    // the RPMs' own files under /etc
	{"services", addServicesAndFirewall},    // systemd units and firewall
	{"inputs", recordInputs},                // what the composition ID is of
}

// stepConfig is the last step before the device files: ManifestJobs
// stops there.
const stepConfig = "config"

// runSteps runs steps on a new plan.
func runSteps(ctx context.Context, in *inputs, steps []step) (soFar, error) {
	p := soFar{Plan: &plan.Plan{}}
	for _, s := range steps {
		var err error
		if p, err = s.run(ctx, in, p); err != nil {
			return soFar{}, err
		}
	}
	return p, nil
}

// stepsThrough returns the steps up to and including the one named last.
func stepsThrough(last string) []step {
	i := slices.IndexFunc(steps, func(s step) bool { return s.name == last })
	return steps[:i+1]
}

// ManifestJobs resolves req and prepares, without rendering, the kustomize
// jobs of its components with manifests or a plugin (plugins run). It is
// for benchmarks and for comparing with the kustomize CLI on exactly the
// inputs Resolve renders (Job.WriteTo).
func ManifestJobs(ctx context.Context, cat *components.Catalog, rel *releases.Release, req Request) ([]ManifestJob, error) {
	in, err := newInputs(ctx, cat, rel, req)
	if err != nil {
		return nil, err
	}
	p, err := runSteps(ctx, in, stepsThrough(stepConfig))
	if err != nil {
		return nil, err
	}
	return prepareManifests(ctx, in, p.Plan)
}

// Availability is what build makes of component name on rel for arch: nil
// when a plan takes it (with what it requires, on top of the catalog's
// smallest profile), else the refusal, as build reports it (errors.Is
// ErrUnpinned for images --allow-unpinned would embed by tag). It runs
// Resolve's steps through the images step: nothing is rendered.
func Availability(ctx context.Context, cat *components.Catalog, rel *releases.Release, arch releases.Arch, name string) error {
	req := Request{Profile: smallestProfile(cat), With: []string{name}, Arch: arch, AllowRedBoot: true}
	in, err := newInputs(ctx, cat, rel, req)
	if err != nil {
		return err
	}
	_, err = runSteps(ctx, in, stepsThrough("images"))
	return err
}

// smallestProfile is the profile of the fewest components: "minimal" in
// the embedded catalog.
func smallestProfile(cat *components.Catalog) string {
	best := ""
	for _, n := range cat.ProfileNames() {
		if best == "" || len(cat.Profiles[n].Components) < len(cat.Profiles[best].Components) {
			best = n
		}
	}
	return best
}
