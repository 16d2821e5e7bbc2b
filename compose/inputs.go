package compose

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/operators"
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
	// RepoFiles are dnf .repo files (--repo-file): RPM repositories the
	// bootc Containerfile enables itself, such as those of microshift-io's
	// build, which no bootc base has.
	RepoFiles []RepoFile
	// Operators is the operator set asked for (--operator,
	// --operator-catalog); nil for none.
	Operators *OperatorRequest
}

// RepoFile is a .repo file as read: Source names it, Data is its bytes.
type RepoFile struct {
	Source string
	Data   []byte
}

// OperatorRequest is the operators asked for, out of a catalog image
// opened for the request's arch.
type OperatorRequest struct {
	Catalog *operators.Catalog
	Choices []operators.Choice
}

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

// inputs are what every step reads and none changes: the catalog as it is
// for the release, the release, the request and the release knowledge.
type inputs struct {
	// cat is the catalog with each component's [[variant]] for rel
	// applied.
	cat *components.Catalog
	// rel is the release with the release files components bring
	// themselves; given is the release as the caller gave it, whose
	// digest the composition ID records.
	rel, given *releases.Release
	req        Request
	know       *knowledge.Knowledge
	facts      *knowledge.Release
	// ownFiles are the release files components brought themselves that
	// the given release lacked (file name -> component).
	ownFiles map[string]string
}

// newInputs looks up the release knowledge for rel and applies the
// catalog's variants and release files for it.
func newInputs(ctx context.Context, cat *components.Catalog, rel *releases.Release, req Request) (*inputs, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	know, err := knowledge.Default()
	if err != nil {
		return nil, fmt.Errorf("loading release knowledge: %w", err)
	}
	facts, err := know.ForBuild(rel.Version, rel.Build)
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", rel, err)
	}
	if facts.Newer && req.StrictRelease {
		return nil, fmt.Errorf("release %s: %w (the newest is %s; --strict-release refuses it, without it %s's rules are applied with a warning; '%s' refreshes the knowledge)", rel, ErrNewerRelease, facts.Rules, facts.Rules, knowledge.RefreshCommand)
	}
	// From here on the catalog is as it is for this release: each
	// component's [[variant]] for it applied.
	forRel := cat.ForRelease(rel.Version)
	withOwn, own := forRel.WithReleaseFiles(rel)
	return &inputs{cat: forRel, rel: withOwn, given: rel, req: req, know: know, facts: facts, ownFiles: own}, nil
}

// soFar is the plan as far as the steps have resolved it, and the files of
// the rendered manifests, which the health check reads apart from the
// other device files and the files step puts in the plan.
type soFar struct {
	*plan.Plan
	rendered []plan.File
}

// selected is the plan's selection: each selected component's reasons,
// by name.
type selected map[string][]plan.Reason

// selection indexes the plan's components.
func selection(p *plan.Plan) selected {
	s := make(selected, len(p.Components))
	for _, c := range p.Components {
		s[c.Name] = c.Reasons
	}
	return s
}

func (s selected) has(n string) bool {
	_, ok := s[n]
	return ok
}

// why explains how n got into the selection, following requirements back to
// the profile or --with: "required by sriov <- --with".
func (s selected) why(n string) string {
	var parts []string
	seen := map[string]bool{}
	for cur := n; !seen[cur]; {
		seen[cur] = true
		rs := s[cur]
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

// OLMComponent is the component that installs operators: an operator set
// selects it.
const OLMComponent = plan.OperatorImagesComponent

// LVMSComponent is the component --lvmd configures.
const LVMSComponent = "storage-lvms"

// MicroShiftPackage is the RPM every plan installs: MicroShift itself.
const MicroShiftPackage = "microshift"

// isMicroShiftPackage reports whether pkg is built from MicroShift's spec.
func isMicroShiftPackage(pkg string) bool {
	return pkg == "microshift" || strings.HasPrefix(pkg, "microshift-")
}

// providers are the components that provide capability for the release's
// build of MicroShift, sorted.
func (in *inputs) providers(capability string) []string {
	var out []string
	for _, n := range in.cat.Providers(capability) {
		if in.cat.Components[n].ForBuild(in.rel.Build) {
			out = append(out, n)
		}
	}
	return out
}

// defaultProvider is the provider of capability that profiles and
// requirements take on the release's build of MicroShift: a component for
// that build that is its default there (default_for), else the
// capability's catalog-wide default.
func (in *inputs) defaultProvider(capability string) string {
	for _, n := range in.cat.ComponentNames() {
		c := in.cat.Components[n]
		if len(c.Builds) > 0 && slices.Contains(c.Builds, in.rel.Build) && slices.Contains(c.DefaultFor, capability) {
			return n
		}
	}
	if cp := in.cat.Capabilities[capability]; cp != nil {
		return cp.Default
	}
	return ""
}

// expandArch replaces dnf's $basearch with the plan's arch.
func expandArch(s string, arch releases.Arch) string {
	return strings.ReplaceAll(s, "$basearch", string(arch))
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
