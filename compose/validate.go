package compose

import (
	"context"
	"errors"
	"fmt"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

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
func Validate(ctx context.Context, cat *components.Catalog, rels []*releases.Release, opts BuildOptions) (*Report, error) {
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
		for _, arch := range rel.Arches() {
			for _, profile := range cat.ProfileNames() {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				distro := opts.Distro
				if distro == "" {
					distro = releaseDistro(rel)
				}
				chk := Check{Subject: fmt.Sprintf("release %s: profile %s on %s: blueprint for %s %s", rel.Stream(), profile, arch, distro, opts.ImageType), Problems: []string{}, Warnings: []string{}}
				p, err := Resolve(ctx, cat, rel, Request{Profile: profile, Arch: arch})
				var cannot *CannotHonourError
				if errors.As(err, &cannot) {
					// The release cannot build this profile; saying so is
					// right, not a problem of the catalog.
					chk.OK, chk.Skipped = true, err.Error()
					rep.Checks = append(rep.Checks, chk)
					continue
				}
				if err == nil {
					var out *Output
					if out, err = Build(ctx, p, opts); err == nil {
						chk.Warnings = append(chk.Warnings, out.Warnings...)
					}
				}
				if err != nil {
					if errors.Is(err, context.Canceled) {
						return nil, err
					}
					chk.Problems = append(chk.Problems, err.Error())
				}
				chk.OK = len(chk.Problems) == 0
				rep.Checks = append(rep.Checks, chk)
			}
		}
	}
	return rep, nil
}

// releaseDistro is the distro a release's blueprints are validated for by
// default, for report lines.
func releaseDistro(rel *releases.Release) string {
	know, err := knowledge.Default()
	if err != nil {
		return "the release's distro"
	}
	facts, err := know.For(rel.Version)
	if err != nil {
		return "the release's distro"
	}
	return facts.Distro
}
