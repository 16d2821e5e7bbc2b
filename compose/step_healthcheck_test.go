package compose_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
)

// The health check step alone: the greenboot check added after the
// rendered manifests' files when they have a workload, read from those
// files only (a component's device file in the same directory is not a
// rendered manifest); --no-health-checks notes what is not waited for.
func TestStepHealthCheck(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	const dir = output.ManifestsDevicePath + "005-app/"
	deployment := plan.File{Path: dir + "apps_v1_deployment_web.yaml", Mode: "0644", Component: "app",
		Data: []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: app\n")}
	rendered := []plan.File{{Path: dir + "kustomization.yaml", Mode: "0644", Component: "app", Data: []byte("resources:\n- apps_v1_deployment_web.yaml\n")}, deployment}
	for _, tc := range []struct {
		name      string
		resources []string
		opts      compose.HealthCheckOptions
		wantAdded bool
		wantNotes []string
		wantErr   string
	}{
		{name: "a Deployment", resources: []string{"Deployment app/web"}, wantAdded: true,
			wantNotes: []string{"greenboot: " + compose.HealthCheckPath + " waits for the 1 workload of app (microshift healthcheck --custom)"}},
		{name: "no workload", resources: []string{"ConfigMap app/settings"}},
		{name: "--no-health-checks", resources: []string{"Deployment app/web"}, opts: compose.HealthCheckOptions{Disabled: true},
			wantNotes: []string{"--no-health-checks: greenboot does not wait for the 1 workload of app, so a boot where they never become ready is kept"}},
		{name: "a timeout of part of a second", resources: []string{"Deployment app/web"}, opts: compose.HealthCheckOptions{Timeout: 1500 * time.Millisecond},
			wantErr: "--health-check-timeout 1.5s: want whole seconds from 1s to 2h46m39s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := selectedPlan("full", "core", "net-a", "app")
			p.Release.Stream = "5.0"
			p.Manifests = []plan.Manifest{{Component: "app", From: plan.FromManifests, Dir: dir, Resources: tc.resources}}
			// Not YAML, and in the rendered directory: the step must not read it.
			p.Files = []plan.File{{Path: dir + "notes.txt", Mode: "0644", Component: "app", Data: []byte("{not: yaml")}}
			got, out, err := compose.RunStep(t.Context(), "healthcheck", stepCatalog(), rel, compose.Request{Profile: "full", Arch: "x86_64", HealthCheck: tc.opts}, p, slices.Clone(rendered))
			if !checkStepErr(t, err, tc.wantErr) {
				return
			}
			want := slices.Clone(rendered)
			if tc.wantAdded {
				if len(out) != len(rendered)+1 || out[len(out)-1].Path != compose.HealthCheckPath || out[len(out)-1].Mode != "0755" {
					t.Fatalf("rendered files %+v, want the check last", out)
				}
				out = out[:len(out)-1]
			}
			if !reflect.DeepEqual(out, want) || len(got.Files) != 1 {
				t.Errorf("rendered files %+v, plan files %d; want %+v and 1", out, len(got.Files), want)
			}
			if !slices.Equal(got.Notes, tc.wantNotes) {
				t.Errorf("notes = %q\nwant    %q", got.Notes, tc.wantNotes)
			}
		})
	}
}
