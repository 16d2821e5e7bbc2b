package compose

import (
	"context"
	"fmt"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// StepNames lists Resolve's steps in the order they run.
func StepNames() []string {
	var names []string
	for _, s := range steps {
		names = append(names, s.name)
	}
	return names
}

// RunStep runs Resolve's step name alone, with the inputs Resolve gives its
// steps for cat, rel and req, on the plan so far p and the rendered
// manifests' files so far; it returns what the step made of them.
func RunStep(ctx context.Context, name string, cat *components.Catalog, rel *releases.Release, req Request, p *plan.Plan, rendered []plan.File) (*plan.Plan, []plan.File, error) {
	in, err := newInputs(ctx, cat, rel, req)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range steps {
		if s.name == name {
			out, err := s.run(ctx, in, soFar{Plan: p, rendered: rendered})
			return out.Plan, out.rendered, err
		}
	}
	return nil, nil, fmt.Errorf("no step %q (have %v)", name, StepNames())
}
