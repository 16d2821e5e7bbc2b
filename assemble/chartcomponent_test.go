package assemble_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/healthcheck"
)

// TestChartComponent builds a component packaged as a Helm chart (the
// chart-app fixture: a chart directory with values, a CRD, NOTES.txt and
// a Service without a namespace) through the whole path: rendered for the
// release's Kubernetes, images pinned to the release digests, the archive
// kept in charts/ and in the lock, the workload in the greenboot check,
// the same bytes twice.
func TestChartComponent(t *testing.T) {
	cat := assembletest.ManifestsCatalog(t)
	for _, stream := range []string{"4.18", "5.0"} {
		p := assembletest.Plan(t, cat, assembletest.Release(t, stream), compose.Request{Profile: "minimal", Arch: releases.X86_64, With: []string{"chart-app"}, AllowRedBoot: true})
		out := assembletest.Build(t, p, assemble.Options{})
		assembletest.CheckListedFiles(t, assembletest.Files(out))
		if len(p.Charts) != 1 {
			t.Fatalf("%s: plan charts = %+v, want hello 0.3.1", stream, p.Charts)
		}
		ch := p.Charts[0]
		archive := assembletest.File(t, out, "charts/hello-0.3.1.tgz")
		sum := sha256.Sum256(archive)
		if ch.Component != "chart-app" || ch.Name != "hello" || ch.Version != "0.3.1" || ch.File != "charts/hello-0.3.1.tgz" || ch.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: chart in the plan = %+v (archive sha256 %x)", stream, ch, sum)
		}
		lock := string(assembletest.File(t, out, output.LockFile))
		if !strings.Contains(lock, `"charts": [`) || !strings.Contains(lock, ch.SHA256) {
			t.Errorf("%s: the lock does not list the chart", stream)
		}
		dep := string(assembletest.File(t, out, "manifests.d/093-chart-app/apps_v1_deployment_chart-app-web.yaml"))
		kube := map[string]string{"4.18": "v1.31.0", "5.0": "v1.36.0"}[stream]
		for _, want := range []string{
			"image: quay.io/example/edge-app@sha256:1111111111111111111111111111111111111111111111111111111111111111",
			"image: quay.io/example/sidecar@sha256:2222222222222222222222222222222222222222222222222222222222222222",
			"replicas: 2", "namespace: chart-app", "kube-version: " + kube,
		} {
			if !strings.Contains(dep, want) {
				t.Errorf("%s: rendered Deployment lacks %q:\n%s", stream, want, dep)
			}
		}
		if svc := string(assembletest.File(t, out, "manifests.d/093-chart-app/v1_service_chart-app-web.yaml")); !strings.Contains(svc, "namespace: chart-app") {
			t.Errorf("%s: the Service is not put in the chart's namespace:\n%s", stream, svc)
		}
		assembletest.File(t, out, "manifests.d/093-chart-app/v1_namespace_chart-app.yaml")
		assembletest.File(t, out, "manifests.d/093-chart-app/apiextensions.k8s.io_v1_customresourcedefinition_greetings.example.com.yaml")
		for _, f := range out.Files {
			if strings.Contains(f.Path, "NOTES") {
				t.Errorf("%s: NOTES.txt rendered into %s", stream, f.Path)
			}
		}
		if check := string(assembletest.File(t, out, "files"+healthcheck.Path)); !strings.Contains(check, "chart-app-web") {
			t.Errorf("%s: the greenboot check does not wait for the chart's Deployment", stream)
		}
		again := assembletest.Build(t, assembletest.Plan(t, cat, assembletest.Release(t, stream), compose.Request{Profile: "minimal", Arch: releases.X86_64, With: []string{"chart-app"}, AllowRedBoot: true}), assemble.Options{})
		if !bytes.Equal(assembletest.File(t, again, "charts/hello-0.3.1.tgz"), archive) || !bytes.Equal(assembletest.File(t, again, output.LockFile), assembletest.File(t, out, output.LockFile)) {
			t.Errorf("%s: a second build differs", stream)
		}
	}
}

// TestChartOperatorArgsPinned: an operator chart that names the image of
// the pods it starts in an argument and an environment value (as
// cert-manager's --acme-http01-solver-image does) gets them pinned to the
// release digest as its image: fields are, the image counts as used (no
// "embedded but unused" warning), and a chart installed into a namespace
// every device has (kube-system) gets no Namespace object.
func TestChartOperatorArgsPinned(t *testing.T) {
	p := assembletest.Plan(t, assembletest.ManifestsCatalog(t), assembletest.Release(t, "5.0"), compose.Request{Profile: "minimal", Arch: releases.X86_64, With: []string{"chart-operator"}})
	out := assembletest.Build(t, p, assemble.Options{})
	dep := string(assembletest.File(t, out, "manifests.d/094-chart-operator/apps_v1_deployment_chart-operator-controller.yaml"))
	const solver = "quay.io/example/operator-solver@sha256:4444444444444444444444444444444444444444444444444444444444444444"
	for _, want := range []string{
		"image: quay.io/example/operator-controller@sha256:3333333333333333333333333333333333333333333333333333333333333333",
		"- --acme-http01-solver-image=" + solver,
		"value: " + solver,
		"- --cluster-resource-namespace=$(POD_NAMESPACE)",
		"namespace: kube-system",
	} {
		if !strings.Contains(dep, want) {
			t.Errorf("rendered Deployment lacks %q:\n%s", want, dep)
		}
	}
	if strings.Contains(dep, "v1.16.2") {
		t.Errorf("a tag is left in the Deployment:\n%s", dep)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, "operator-solver") {
			t.Errorf("warning about the solver image: %s", w)
		}
	}
	var used []string
	for _, m := range p.Manifests {
		if m.Component == "chart-operator" {
			used = m.Images
		}
	}
	if !slices.Contains(used, solver) {
		t.Errorf("the manifests of chart-operator use %q, not the solver", used)
	}
	for _, f := range out.Files {
		if strings.Contains(f.Path, "094-chart-operator/") && strings.Contains(f.Path, "_namespace_") {
			t.Errorf("a Namespace object for kube-system: %s", f.Path)
		}
	}
	if !slices.ContainsFunc(p.Notes, func(n string) bool {
		return strings.Contains(n, "namespace kube-system exists on every MicroShift device")
	}) {
		t.Errorf("no note about the namespace: %q", p.Notes)
	}
}

// TestChartArgImageUnmapped: an image named in an argument that no
// [manifests.images] entry pins is refused, naming the container and the
// argument, as an image: field is.
func TestChartArgImageUnmapped(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(testutil.TestdataDir(t, "catalogs", "manifests"))); err != nil {
		t.Fatal(err)
	}
	toml := filepath.Join(dir, "components", "chart-operator", "component.toml")
	data, err := os.ReadFile(toml)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(toml, []byte(strings.Replace(string(data), "\"quay.io/example/operator-solver\" = \"solver\"\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := components.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = assemble.Plan(t.Context(), cat, assembletest.Release(t, "5.0"), compose.Request{Profile: "minimal", Arch: releases.X86_64, With: []string{"chart-operator"}})
	want := `component "chart-operator": Deployment kube-system/chart-operator-controller: container "controller" args[2] names image "quay.io/example/operator-solver:v1.16.2": image is not in the plan; map "quay.io/example/operator-solver" to a key of images.keys in [manifests.images]`
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, compose.ErrImageNotInPlan) {
		t.Errorf("Resolve = %v\nwant %q", err, want)
	}
}

// TestSameChartTwice: two components carrying the same chart (name,
// version and bytes) share one archive, both listed with its digest; two
// carrying different charts of the same name and version are refused,
// where one archive would overwrite the other and the lock and SBOM name
// a digest no file has.
func TestSameChartTwice(t *testing.T) {
	copyComponent := func(t *testing.T, dir, name string, edit func(chartDir string)) {
		t.Helper()
		src := filepath.Join(dir, "components", "chart-app")
		dst := filepath.Join(dir, "components", name)
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		toml := filepath.Join(dst, "component.toml")
		data, err := os.ReadFile(toml)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(data), `name = "chart-app"`, fmt.Sprintf("name = %q", name), 1)
		s = strings.Replace(s, "order = 93", "order = 95", 1)
		s = strings.Replace(s, `namespace = "chart-app"`, fmt.Sprintf("namespace = %q", name), 1)
		s = strings.Replace(s, `file = "chart-app"`, fmt.Sprintf("file = %q", name), 1)
		for _, arch := range []string{"x86_64", "aarch64"} {
			if err := os.Rename(filepath.Join(dst, "release", "release-chart-app-"+arch+".json"), filepath.Join(dst, "release", "release-"+name+"-"+arch+".json")); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(toml, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(filepath.Join(dst, "chart"))
		}
	}
	catalog := func(t *testing.T, edit func(string)) *components.Catalog {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(testutil.TestdataDir(t, "catalogs", "manifests"))); err != nil {
			t.Fatal(err)
		}
		copyComponent(t, dir, "chart-app-two", edit)
		cat, err := components.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		return cat
	}
	req := compose.Request{Profile: "minimal", Arch: releases.X86_64, With: []string{"chart-app", "chart-app-two"}}

	p := assembletest.Plan(t, catalog(t, nil), assembletest.Release(t, "5.0"), req)
	out := assembletest.Build(t, p, assemble.Options{})
	files := assembletest.Files(out)
	assembletest.CheckListedFiles(t, files)
	n := 0
	for _, f := range out.Files {
		if f.Path == "charts/hello-0.3.1.tgz" {
			n++
		}
	}
	if len(p.Charts) != 2 || p.Charts[0].SHA256 != p.Charts[1].SHA256 || n != 1 {
		t.Errorf("the same chart twice: plan charts %+v, written %d times", p.Charts, n)
	}

	changed := catalog(t, func(chart string) {
		if err := os.WriteFile(filepath.Join(chart, "templates", "extra.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	_, err := assemble.Plan(t.Context(), changed, assembletest.Release(t, "5.0"), req)
	want := `components "chart-app" and "chart-app-two" carry different charts named hello 0.3.1`
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "give the changed chart a version of its own") {
		t.Errorf("Resolve = %v\nwant %q", err, want)
	}
}
