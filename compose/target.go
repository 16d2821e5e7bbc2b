package compose

import (
	"fmt"
	"strings"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// target picks the distro the plan is built for: the release's default,
// or the requested one when the release is built for it; and its bootc
// base image, or the requested one.
func (r *resolver) target() (plan.Target, error) {
	d := r.facts.Distros[0] // the default; the knowledge guarantees one
	if want := r.req.Distro; want != "" && want != d.Name {
		var names []string
		found := false
		for _, cand := range r.facts.Distros {
			names = append(names, cand.Name)
			if cand.Name == want {
				d, found = cand, true
			}
		}
		if !found {
			// A name osbuild does not know is a typo: suggest the closest.
			hint := ""
			if m := suggest.Closest(want, names); m != "" && blueprints.ImageTypes(want, r.req.Arch) == nil {
				hint = fmt.Sprintf("; did you mean %q?", m)
			}
			return plan.Target{}, &CannotHonourError{fmt.Sprintf("release %s is not built for distro %q: MicroShift %s is built and tested for %s%s",
				r.rel, want, r.rel.Stream(), strings.Join(names, ", "), hint)}
		}
	}
	t := plan.Target{Distro: d.Name, ImageType: d.ImageType, BootcBase: d.BootcBase}
	if r.req.BootcBase != "" {
		t.BootcBase = r.req.BootcBase
	}
	return t, nil
}

// versionPin is how the plan pins MicroShift's RPMs, and the warning that
// goes with a stream pin.
type versionPin struct {
	kind, pin, warning string
}

// version decides the pin from the core release file's base for the
// plan's arch: exact for a published version, the stream otherwise (with
// a warning, or an error when the request wants the exact version).
func (r *resolver) version() (versionPin, error) {
	base := r.rel.Base(r.req.Arch)
	kind := releases.BaseKind(base)
	if kind == releases.Shipped {
		return versionPin{kind: kind, pin: plan.PinExact}, nil
	}
	if r.req.ExactVersion {
		return versionPin{}, fmt.Errorf("release %s is %s, %s, not a published version: no MicroShift RPM has its exact version, so the RPMs cannot be pinned to the version of its images (--exact-version); build from a shipped version's release files (--release-dir)",
			r.rel, base, releases.DescribeKind(kind))
	}
	// The warning does not name the release's source, so that the same
	// files give the same plan wherever they are read from.
	return versionPin{kind: kind, pin: plan.PinStream, warning: fmt.Sprintf(
		"release base %s is %s: no RPM of that version is published, so MicroShift's RPMs are pinned to the stream %s.* and the device may install a version whose images are not the ones embedded; build from a shipped version's release files, or pass --exact-version to refuse",
		base, releases.DescribeKind(kind), r.rel.Stream())}, nil
}

// checkUpgrade refuses a release that would not start on the data of the
// release the request upgrades from, by the plan's release's own rule.
func (r *resolver) checkUpgrade() (*plan.Upgrade, error) {
	from := r.req.UpgradeFrom
	if from == nil {
		return nil, nil
	}
	u, err := r.know.AcceptsDataFrom(r.facts, from)
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", r.rel, err)
	}
	if u.Err != nil {
		return nil, fmt.Errorf("upgrading from %s: %w", u.From, u.Err)
	}
	return &plan.Upgrade{From: u.From, Distance: u.Distance, MaxSkew: u.MaxSkew}, nil
}
