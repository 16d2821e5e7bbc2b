package compose

import (
	"context"
	"fmt"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/plan"
)

// chooseTarget picks the distro the plan is built for: the release's
// default, or the requested one when the release is built for it; and its
// bootc base image, or the requested one.
func chooseTarget(_ context.Context, in *inputs, p soFar) (soFar, error) {
	d := in.facts.Distros[0] // the default; the knowledge guarantees one
	// Recorded RPMs of one dist (an el10 build) are built for the distros
	// that take it: the first is the default.
	if dist := in.rel.RPMDist(); dist != "" && d.Dist != "" && d.Dist != dist {
		for _, cand := range in.facts.Distros {
			if cand.Dist == dist {
				d = cand
				break
			}
		}
	}
	if want := in.req.Distro; want != "" && want != d.Name {
		var names []string
		found := false
		for _, cand := range in.facts.Distros {
			names = append(names, cand.Name)
			if cand.Name == want {
				d, found = cand, true
			}
		}
		if !found {
			// A name osbuild does not know is a typo: suggest the closest.
			hint := ""
			if m := suggest.Closest(want, names); m != "" && distros.ImageTypes(want, in.req.Arch) == nil {
				hint = fmt.Sprintf("; did you mean %q?", m)
			}
			what := "MicroShift " + in.rel.Stream()
			if b := in.facts.Build; b != nil && !b.Default {
				what = b.Title + " of MicroShift " + in.rel.Stream()
			}
			return p, &CannotHonourError{fmt.Sprintf("release %s is not built for distro %q: %s is built and tested for %s%s",
				in.rel, want, what, strings.Join(names, ", "), hint)}
		}
	}
	if dist := in.rel.RPMDist(); dist != "" && d.Dist != "" && d.Dist != dist {
		return p, &CannotHonourError{fmt.Sprintf("release %s is not built for distro %q: its RPMs are %s builds (%s), and %s takes %s ones",
			in.rel, d.Name, dist, in.rel.Origin, d.Name, d.Dist)}
	}
	p.Target = plan.Target{Distro: d.Name, ImageType: d.ImageType, BootcBase: d.BootcBase, OSBuild: d.OSBuild}
	if in.req.BootcBase != "" {
		p.Target.BootcBase = in.req.BootcBase
	}
	return p, nil
}
