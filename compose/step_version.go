package compose

import (
	"context"
	"fmt"

	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// pinVersion decides how the plan pins MicroShift's RPMs, from the core
// release file's base for the plan's arch: exact for a published version,
// the stream otherwise (with a warning, or an error when the request wants
// the exact version).
func pinVersion(_ context.Context, in *inputs, p soFar) (soFar, error) {
	base := in.rel.Base(in.req.Arch)
	kind := releases.BaseKind(base)
	p.Release.Kind = kind
	if b := in.facts.Build; b != nil && !b.Default {
		// Another build's RPMs are not versioned X.Y.Z: the version its
		// recorded release-info RPMs carry is the one to pin.
		pb := &plan.Build{Name: b.Name, Title: b.Title, PullSecret: b.PullSecret, RPMSource: b.RPMSource}
		if v := in.rel.MicroShiftIO; v != nil {
			pb.OKD, pb.Version = v.OKD, in.rel.RPMVersion()
		}
		p.Release.Build = pb
		if pb.Version != "" {
			p.Release.Pin = plan.PinExact
			return p, nil
		}
	}
	if kind == releases.Shipped {
		p.Release.Pin = plan.PinExact
		return p, nil
	}
	if in.req.ExactVersion {
		return p, fmt.Errorf("release %s is %s, %s, not a published version: no MicroShift RPM has its exact version, so the RPMs cannot be pinned to the version of its images (--exact-version); build from a shipped version's release files (--release-dir)",
			in.rel, base, releases.DescribeKind(kind))
	}
	p.Release.Pin = plan.PinStream
	if b := p.Release.Build; b != nil {
		p.Warnings = append(p.Warnings, fmt.Sprintf(
			"release base %s is %s and the release-info RPMs of %s were not recorded with its files, so MicroShift's RPMs are pinned to the stream %s.* and the device may install a build whose images are not the ones embedded; take the release with release fetch, or release import of its RPMs, which record them, or pass --exact-version to refuse",
			base, releases.DescribeKind(kind), b.Title, in.rel.Stream()))
		return p, nil
	}
	// The warning does not name the release's source, so that the same
	// files give the same plan wherever they are read from.
	p.Warnings = append(p.Warnings, fmt.Sprintf(
		"release base %s is %s: no RPM of that version is published, so MicroShift's RPMs are pinned to the stream %s.* and the device may install a version whose images are not the ones embedded; build from a shipped version's release files, or pass --exact-version to refuse",
		base, releases.DescribeKind(kind), in.rel.Stream()))
	return p, nil
}
