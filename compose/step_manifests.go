package compose

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/microshift-compose/microshift-compose/compose/manifests"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
)

// addManifests renders the prepared jobs (prepareManifests), cross-checks
// every container image against the plan, and adds the rendered
// directories' files to those rendered so far.
func addManifests(ctx context.Context, in *inputs, p soFar) (soFar, error) {
	jobs, err := prepareManifests(ctx, in, p.Plan)
	if err != nil {
		return p, err
	}
	var files []plan.File
	for _, mj := range jobs {
		c := in.cat.Components[mj.Component]
		if mj.Job == nil {
			p.Notes = append(p.Notes, fmt.Sprintf("component %s: its plugin printed no manifests, so %s has no %03d-%s directory", c.Name, output.ManifestsDevicePath, c.Order, c.Name))
			continue
		}
		res, err := mj.Job.Render()
		if err != nil {
			return p, fmt.Errorf("component %q: rendering %s: %w", c.Name, mj.From, err)
		}
		m, dirFiles, err := RenderedDir(p.Plan, c.Name, mj.From, fmt.Sprintf("%s%03d-%s/", output.ManifestsDevicePath, c.Order, c.Name), res)
		if err != nil {
			return p, err
		}
		files = append(files, dirFiles...)
		p.Manifests = append(p.Manifests, m)
		if mj.Chart != nil {
			if err := sameChartFile(p.Charts, mj.Chart); err != nil {
				return p, err
			}
			p.Charts = append(p.Charts, *mj.Chart)
			p.Notes = append(p.Notes, mj.Notes...)
		}
	}
	p.rendered = append(p.rendered, files...)
	return p, nil
}

// sameChartFile refuses a chart whose archive would be written where
// another component's different chart is (charts/NAME-VERSION.tgz): one
// would overwrite the other, and the lock and SBOM would name a digest no
// file has. The same chart in two components is one file.
func sameChartFile(charts []plan.Chart, ch *plan.Chart) error {
	for _, prev := range charts {
		if prev.File == ch.File && prev.SHA256 != ch.SHA256 {
			return fmt.Errorf("components %q and %q carry different charts named %s %s (sha256 %.12s and %.12s): %s holds one archive; give the changed chart a version of its own in its Chart.yaml",
				prev.Component, ch.Component, ch.Name, ch.Version, prev.SHA256, ch.SHA256, ch.File)
		}
	}
	return nil
}

// RenderedDir is a rendered manifests.d directory (dir, a device path
// ending in "/") as the plan lists it, and its files: kustomization.yaml
// and one file per resource, in the order kustomize rendered them. Every
// container image of the resources must be one the plan embeds: anything
// else is an image an airgapped device cannot pull.
func RenderedDir(p *plan.Plan, component, from, dir string, res *manifests.Result) (plan.Manifest, []plan.File, error) {
	m, err := checkImages(p, component, from, res)
	if err != nil {
		return m, nil, err
	}
	m.Dir = dir
	files := []plan.File{{Path: dir + manifests.KustomizationFile, Mode: "0644", Component: component, Data: res.Kustomization}}
	for _, rs := range res.Resources {
		files = append(files, plan.File{Path: dir + rs.File, Mode: "0644", Component: component, Data: rs.Data})
	}
	return m, files, nil
}

// InsertManifest returns the plan's manifests with m among them after
// those of its component and of the components applied before it: the
// plan lists manifests in apply order.
func InsertManifest(p *plan.Plan, m plan.Manifest) []plan.Manifest {
	order := make(map[string]int, len(p.Components))
	for i, c := range p.Components {
		order[c.Name] = i
	}
	at := order[m.Component]
	i := slices.IndexFunc(p.Manifests, func(x plan.Manifest) bool { return order[x.Component] > at })
	if i < 0 {
		return append(p.Manifests, m)
	}
	return slices.Insert(p.Manifests, i, m)
}

// checkImages requires every container image of the rendered resources to
// be one the plan embeds: anything else is an image an airgapped device
// cannot pull.
func checkImages(p *plan.Plan, component, from string, res *manifests.Result) (plan.Manifest, error) {
	inPlan := map[string]bool{}
	for _, im := range p.Images {
		inPlan[im.Ref] = true
	}
	m := plan.Manifest{Component: component, From: from, Resources: []string{}, Images: []string{}}
	used := map[string]bool{}
	for _, rs := range res.Resources {
		m.Resources = append(m.Resources, rs.ID())
		for _, im := range rs.Images {
			if !inPlan[im.Ref] {
				return m, imageError(component, rs.ID(), im)
			}
			used[im.Ref] = true
		}
	}
	m.Images = slices.Sorted(maps.Keys(used))
	return m, nil
}
