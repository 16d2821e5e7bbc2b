package compose

import (
	"context"
	"fmt"
	"path"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose/chart"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
)

// renderChart renders a component's chart for the plan's release, with
// .Capabilities.KubeVersion the release's Kubernetes, into a resource
// stream for the kustomize path.
func renderChart(ctx context.Context, in *inputs, c *components.Component) ([]byte, *plan.Chart, []string, error) {
	spec := c.Chart
	kube := in.facts.Kubernetes
	if kube == "" {
		return nil, nil, nil, fmt.Errorf("chart %s: microshift-compose does not know the Kubernetes version of release %s (releases/knowledge/data/releases.toml), which the chart renders for", spec.Path, in.rel.Stream())
	}
	l, err := chart.Load(c.FS, chart.Spec{Path: spec.Path, SHA256: spec.SHA256, Namespace: spec.Namespace, Values: spec.Values, Release: spec.Release})
	if err != nil {
		return nil, nil, nil, err
	}
	release := spec.Release
	if release == "" {
		release = c.Name
	}
	create := !in.facts.NamespaceExists(spec.Namespace)
	stream, notes, err := chart.Render(ctx, l, chart.Options{Release: release, Namespace: spec.Namespace, KubeVersion: kube, CreateNamespace: create})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("rendering chart %s: %w", spec.Path, err)
	}
	if !create {
		notes = append(notes, fmt.Sprintf("namespace %s exists on every MicroShift device: the build adds no Namespace object for it", spec.Namespace))
	}
	md := l.Chart.Metadata
	for i, n := range notes {
		notes[i] = fmt.Sprintf("component %s: chart %s: %s", c.Name, spec.Path, n)
	}
	return stream, &plan.Chart{Component: c.Name, Name: md.Name, Version: md.Version, File: path.Join(output.ChartsDir, l.File()), SHA256: l.SHA256, Data: l.Archive}, notes, nil
}
