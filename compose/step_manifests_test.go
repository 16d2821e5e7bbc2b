package compose_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
)

// webApp gives app of stepCatalog a manifests/ directory: a Deployment of
// the image quay.io/x/web, which images maps to its keys.
func webApp(cat *components.Catalog, images map[string]string) {
	app := cat.Components["app"]
	app.HasManifests = true
	app.Images.Keys = []string{"web"}
	app.Manifests.Images = images
	app.FS = fstest.MapFS{
		"manifests/kustomization.yaml": {Data: []byte("resources:\n- web.yaml\n")},
		"manifests/web.yaml": {Data: []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: app
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: quay.io/x/web:latest
`)},
	}
}

// The manifests step alone: a component's manifests/ rendered by
// kustomize with its images pinned to the plan's references, into
// manifests.d/NNN-<name>/; an image the plan does not embed refused.
func TestStepManifests(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	web := "quay.io/x/web@sha256:" + strings.Repeat("c", 64)
	const dir = output.ManifestsDevicePath + "005-app/"
	for _, tc := range []struct {
		name      string
		images    map[string]string
		want      []plan.Manifest
		wantFiles []string
		wantErr   string
	}{
		{name: "pinned to the plan's reference", images: map[string]string{"quay.io/x/web": "web"},
			want:      []plan.Manifest{{Component: "app", From: plan.FromManifests, Dir: dir, Resources: []string{"Deployment app/web"}, Images: []string{web}}},
			wantFiles: []string{dir + "kustomization.yaml", dir + "apps_v1_deployment_web.yaml"}},
		{name: "an image the plan does not embed",
			wantErr: `component "app": Deployment app/web: container "web" image "quay.io/x/web:latest": image is not in the plan; map "quay.io/x/web" to a key of images.keys in [manifests.images] so it is pinned to the release digest (an airgapped device cannot pull it)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := stepCatalog()
			webApp(cat, tc.images)
			p := selectedPlan("full", "core", "net-a", "app")
			p.Images = []plan.Image{{Ref: web, Pinned: true, Uses: []plan.ImageUse{{Component: "app", File: "release-x86_64.json", Key: "web"}}}}
			got, rendered, err := compose.RunStep(t.Context(), "manifests", cat, rel, compose.Request{Profile: "full", Arch: "x86_64"}, p, nil)
			if !checkStepErr(t, err, tc.wantErr) {
				if !errors.Is(err, compose.ErrImageNotInPlan) {
					t.Errorf("err does not wrap ErrImageNotInPlan")
				}
				return
			}
			if !reflect.DeepEqual(got.Manifests, tc.want) {
				t.Errorf("manifests:\n%+v\nwant\n%+v", got.Manifests, tc.want)
			}
			var paths []string
			for _, f := range rendered {
				paths = append(paths, f.Path)
				if f.Component != "app" || f.Mode != "0644" {
					t.Errorf("%s: component %q mode %q", f.Path, f.Component, f.Mode)
				}
				if strings.HasSuffix(f.Path, "web.yaml") && !strings.Contains(string(f.Data), "image: "+web+"\n") {
					t.Errorf("%s does not run %s:\n%s", f.Path, web, f.Data)
				}
			}
			if !reflect.DeepEqual(paths, tc.wantFiles) || len(got.Files) != 0 {
				t.Errorf("rendered %q, plan files %d; want %q and none", paths, len(got.Files), tc.wantFiles)
			}
		})
	}
}
