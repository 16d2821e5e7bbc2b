package compose

import (
	"context"
	"fmt"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// addHealthCheck adds the greenboot required check that waits for the
// workloads of the plan's rendered manifests, which MicroShift's own check
// does not know, by the release's method (knowledge [[health_check]]).
// Nothing is added when no rendered manifest has a workload. The check
// goes with the rendered manifests' files, which the workloads are read
// from.
func addHealthCheck(_ context.Context, in *inputs, p soFar) (soFar, error) {
	files := p.rendered
	opts := in.req.HealthCheck
	if err := opts.Validate(); err != nil {
		return p, err
	}
	ws, err := RenderedWorkloads(p.Plan, files)
	if err != nil || len(ws) == 0 {
		return p, err
	}
	comps := workloadComponents(ws)
	if opts.Disabled {
		p.Notes = append(p.Notes, fmt.Sprintf("--no-health-checks: greenboot does not wait for the %d %s of %s, so a boot where they never become ready is kept",
			len(ws), text.Plural(len(ws), "workload", "workloads"), strings.Join(comps, ", ")))
		return p, nil
	}
	hc := in.facts.HealthCheck
	if hc == nil {
		return p, fmt.Errorf("release %s: microshift-compose knows no greenboot check method for it (releases/knowledge/data/releases.toml [[health_check]]); build with --no-health-checks", in.rel.Stream())
	}
	script, err := HealthCheckScript(p.Release.Stream, hc, ws, opts.Timeout)
	if err != nil {
		return p, err
	}
	how := "microshift healthcheck --custom"
	if hc.Method == knowledge.HealthCheckFunctions {
		how = "the functions of " + greenbootFunctions
	}
	p.Notes = append(p.Notes, fmt.Sprintf("greenboot: %s waits for the %d %s of %s (%s)",
		HealthCheckPath, len(ws), text.Plural(len(ws), "workload", "workloads"), strings.Join(comps, ", "), how))
	p.rendered = append(files, plan.File{Path: HealthCheckPath, Mode: "0755", Data: script})
	return p, nil
}
