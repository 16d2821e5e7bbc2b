package assemble

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// ValidateOptions choose what the blueprints are validated for.
type ValidateOptions struct {
	// Distro is the distro to build for ("" = each release's default); a
	// release not built for it is skipped, saying so.
	Distro string
	// ImageType is the osbuild image type ("" = the distro's default).
	ImageType string
}

// Check is one line of a validation report.
type Check struct {
	Subject string `json:"subject"`
	OK      bool   `json:"ok"`
	// Skipped says why the release cannot build this selection, which is
	// not a problem (the build refuses it with this reason).
	Skipped  string   `json:"skipped,omitempty"`
	Problems []string `json:"problems"`
	Warnings []string `json:"warnings"`
}

// Report is the result of Validate.
type Report struct {
	Checks []Check `json:"checks"`
}

// OK reports whether every check passed.
func (r *Report) OK() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// Validate checks a catalog against releases and builds, in memory, the
// blueprint of every profile for every arch of every release, validating
// each with osbuild. Problems are collected, not returned early, so one run
// lists everything to fix.
func Validate(ctx context.Context, cat *components.Catalog, rels []*releases.Release, opts ValidateOptions) (*Report, error) {
	rep := &Report{}
	for _, rel := range rels {
		chk := Check{Subject: "release " + rel.String() + ": catalog and release files", Problems: []string{}, Warnings: []string{}}
		for _, p := range cat.ReleaseProblems(rel) {
			chk.Problems = append(chk.Problems, p.Error())
		}
		for _, f := range rel.Files() {
			for _, im := range f.Images {
				if !releases.IsDigestPinned(im.Ref) {
					chk.Warnings = append(chk.Warnings, fmt.Sprintf("%s: image %q is not pinned by digest: %s", f.Name, im.Key, im.Ref))
				}
			}
		}
		chk.OK = len(chk.Problems) == 0
		rep.Checks = append(rep.Checks, chk)
		// The blueprint checks are independent: they run on every core,
		// each writing its own slot, so the report keeps its order.
		arches, profiles := rel.Arches(), cat.ProfileNames()
		cells := make([]Check, len(arches)*len(profiles))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(runtime.GOMAXPROCS(0))
		for a, arch := range arches {
			for p, profile := range profiles {
				g.Go(func() error {
					chk, err := validateProfile(gctx, cat, rel, arch, profile, opts)
					cells[a*len(profiles)+p] = chk
					return err
				})
			}
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		rep.Checks = append(rep.Checks, cells...)
	}
	return rep, nil
}

// validateProfile builds one profile's blueprint for a release and arch
// in memory and validates it with osbuild. Only cancellation is an error;
// everything else is the check's problem.
func validateProfile(ctx context.Context, cat *components.Catalog, rel *releases.Release, arch releases.Arch, profile string, opts ValidateOptions) (Check, error) {
	if err := ctx.Err(); err != nil {
		return Check{}, err
	}
	distro, imageType := releaseTarget(rel, opts)
	chk := Check{Subject: fmt.Sprintf("release %s: profile %s on %s: blueprint for %s %s", rel.Stream(), profile, arch, distro, imageType), Problems: []string{}, Warnings: []string{}}
	req := compose.Request{Profile: profile, Arch: arch, Distro: opts.Distro}
	p, err := Plan(ctx, cat, rel, req)
	if errors.Is(err, compose.ErrRedBoot) {
		// A device that never becomes healthy is the build's refusal,
		// not a problem of the catalog: say so, and still check the
		// blueprint --allow-red-boot would build.
		chk.Warnings = append(chk.Warnings, "build refuses it: "+err.Error())
		req.AllowRedBoot = true
		p, err = Plan(ctx, cat, rel, req)
	}
	var cannot *compose.CannotHonourError
	if errors.As(err, &cannot) {
		// The release cannot build this profile; saying so is right,
		// not a problem of the catalog.
		chk.OK, chk.Skipped = true, err.Error()
		return chk, nil
	}
	if err == nil {
		var out *output.Dir
		if out, err = Build(ctx, p, Options{ImageType: opts.ImageType, noSBOM: true}); err == nil {
			chk.Warnings = append(chk.Warnings, out.Warnings...)
		}
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return chk, err
		}
		chk.Problems = append(chk.Problems, err.Error())
	}
	chk.OK = len(chk.Problems) == 0
	return chk, nil
}

// releaseTarget is the distro and image type a release's blueprints are
// validated for, for report lines.
func releaseTarget(rel *releases.Release, opts ValidateOptions) (distro, imageType string) {
	distro, imageType = opts.Distro, opts.ImageType
	know, err := knowledge.Default()
	if err != nil {
		return cmp.Or(distro, "the release's distro"), cmp.Or(imageType, "its image type")
	}
	facts, err := know.ForBuild(rel.Version, rel.Build)
	if err != nil {
		return cmp.Or(distro, "the release's distro"), cmp.Or(imageType, "its image type")
	}
	for _, d := range facts.Distros {
		if d.Name == distro || distro == "" && d.Default {
			distro, imageType = d.Name, cmp.Or(imageType, d.ImageType)
		}
	}
	return distro, cmp.Or(imageType, "(no image type: bootc only)")
}
