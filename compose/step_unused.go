package compose

import (
	"context"
	"fmt"
	"strings"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/plan"
)

// warnUnused reports images of rendering components that nothing on the
// device uses: no rendered container and no device file names them. Images
// of components without manifests or a plugin are not checked: their
// manifests are built into MicroShift or shipped by their RPMs, which
// reference exactly the release file's images.
func warnUnused(_ context.Context, in *inputs, p soFar) (soFar, error) {
	refs := imageRefs(p.Plan)
	used := map[string]bool{}
	for _, m := range p.Manifests {
		for _, ref := range m.Images {
			used[ref] = true
		}
	}
	for _, pc := range p.Components {
		n := pc.Name
		c := in.cat.Components[n]
		if !c.Renders() {
			continue
		}
		for _, k := range imageKeys(c) {
			ref, ok := refs[n][k]
			if !ok || used[ref] || inFiles(p.Plan, ref) {
				continue
			}
			p.Warnings = append(p.Warnings, fmt.Sprintf("component %q: image %q (%s) is embedded but no rendered manifest or device file uses it", n, k, ref))
		}
	}
	return p, nil
}

func inFiles(p *plan.Plan, ref string) bool {
	for _, f := range p.Files {
		if strings.Contains(string(f.Data), ref) {
			return true
		}
	}
	return false
}

// imageKeys are every key of a component's image sets.
func imageKeys(c *components.Component) []string {
	var out []string
	for _, set := range c.ImageSets() {
		out = append(out, set.Keys...)
	}
	return out
}
