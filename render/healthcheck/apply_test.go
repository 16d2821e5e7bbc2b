package healthcheck_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
	"github.com/microshift-compose/microshift-compose/render/healthcheck"
)

// Apply alone: the greenboot check is added when the rendered manifests
// have a workload, read from the rendered manifests' files only (a
// component's device file in the same directory that is no resource is not
// read); --no-health-checks notes what is not waited for; a release with no
// check method is refused.
func TestApply(t *testing.T) {
	const dir = output.ManifestsDevicePath + "005-app/"
	rendered := []plan.File{
		{Path: dir + "kustomization.yaml", Mode: "0644", Component: "app", Data: []byte("resources:\n- apps_v1_deployment_web.yaml\n")},
		{Path: dir + "apps_v1_deployment_web.yaml", Mode: "0644", Component: "app",
			Data: []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: app\n")},
	}
	command := &knowledge.HealthCheck{Method: knowledge.HealthCheckCommand}
	for _, tc := range []struct {
		name      string
		resources []string
		hc        *knowledge.HealthCheck
		opts      compose.HealthCheckOptions
		wantAdded bool
		wantNotes []string
		wantErr   string
	}{
		{name: "a Deployment", resources: []string{"Deployment app/web"}, hc: command, wantAdded: true,
			wantNotes: []string{"greenboot: " + healthcheck.Path + " waits for the 1 workload of app (microshift healthcheck --custom)"}},
		{name: "no workload", resources: []string{"ConfigMap app/settings"}, hc: command},
		{name: "--no-health-checks", resources: []string{"Deployment app/web"}, hc: command, opts: compose.HealthCheckOptions{Disabled: true},
			wantNotes: []string{"--no-health-checks: greenboot does not wait for the 1 workload of app, so a boot where they never become ready is kept"}},
		{name: "a release without a method", resources: []string{"Deployment app/web"},
			wantErr: "release 5.0: microshift-compose knows no greenboot check method for it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &plan.Plan{Release: plan.Release{Stream: "5.0"}}
			p.Manifests = []plan.Manifest{{Component: "app", From: plan.FromManifests, Dir: dir, Resources: tc.resources}}
			if err := p.AddFiles(append(slices.Clone(rendered), plan.File{Path: dir + "notes.txt", Mode: "0644", Component: "app", Data: []byte("{not: yaml")})...); err != nil {
				t.Fatal(err)
			}
			before := len(p.Files)
			err := healthcheck.Apply(p, tc.hc, tc.opts)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Apply() = %v, want an error containing %q", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatalf("Apply() = %v", err)
			}
			check := p.File(healthcheck.Path)
			if tc.wantAdded != (check != nil) || tc.wantAdded && (check.Mode != "0755" || check.SHA256 == "" || len(p.Files) != before+1) {
				t.Errorf("check %+v (want added: %v), %d files after %d", check, tc.wantAdded, len(p.Files), before)
			}
			if !slices.Equal(p.Notes, tc.wantNotes) {
				t.Errorf("notes = %q\nwant    %q", p.Notes, tc.wantNotes)
			}
		})
	}
}
