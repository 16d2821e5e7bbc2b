package compose_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/releases"
)

// TestChartComponent builds a component packaged as a Helm chart (the
// chart-app fixture: a chart directory with values, a CRD, NOTES.txt and
// a Service without a namespace) through the whole path: rendered for the
// release's Kubernetes, images pinned to the release digests, the archive
// kept in charts/ and in the lock, the workload in the greenboot check,
// the same bytes twice.
func TestChartComponent(t *testing.T) {
	cat := manifestsCatalog(t)
	for _, stream := range []string{"4.18", "5.0"} {
		p := mustResolve(t, cat, embeddedRelease(t, stream), compose.Request{Profile: "minimal", Arch: releases.X86_64, With: []string{"chart-app"}, AllowRedBoot: true})
		out := mustBuild(t, p)
		if len(p.Charts) != 1 {
			t.Fatalf("%s: plan charts = %+v, want hello 0.3.1", stream, p.Charts)
		}
		ch := p.Charts[0]
		archive := outputFile(t, out, "charts/hello-0.3.1.tgz")
		sum := sha256.Sum256(archive)
		if ch.Component != "chart-app" || ch.Name != "hello" || ch.Version != "0.3.1" || ch.File != "charts/hello-0.3.1.tgz" || ch.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: chart in the plan = %+v (archive sha256 %x)", stream, ch, sum)
		}
		lock := string(outputFile(t, out, compose.LockFile))
		if !strings.Contains(lock, `"charts": [`) || !strings.Contains(lock, ch.SHA256) {
			t.Errorf("%s: the lock does not list the chart", stream)
		}
		dep := string(outputFile(t, out, "manifests.d/093-chart-app/apps_v1_deployment_chart-app-web.yaml"))
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
		if svc := string(outputFile(t, out, "manifests.d/093-chart-app/v1_service_chart-app-web.yaml")); !strings.Contains(svc, "namespace: chart-app") {
			t.Errorf("%s: the Service is not put in the chart's namespace:\n%s", stream, svc)
		}
		outputFile(t, out, "manifests.d/093-chart-app/v1_namespace_chart-app.yaml")
		outputFile(t, out, "manifests.d/093-chart-app/apiextensions.k8s.io_v1_customresourcedefinition_greetings.example.com.yaml")
		for _, f := range out.Files {
			if strings.Contains(f.Path, "NOTES") {
				t.Errorf("%s: NOTES.txt rendered into %s", stream, f.Path)
			}
		}
		if check := string(outputFile(t, out, "files"+compose.HealthCheckPath)); !strings.Contains(check, "chart-app-web") {
			t.Errorf("%s: the greenboot check does not wait for the chart's Deployment", stream)
		}
		again := mustBuild(t, mustResolve(t, cat, embeddedRelease(t, stream), compose.Request{Profile: "minimal", Arch: releases.X86_64, With: []string{"chart-app"}, AllowRedBoot: true}))
		if !bytes.Equal(outputFile(t, again, "charts/hello-0.3.1.tgz"), archive) || !bytes.Equal(outputFile(t, again, compose.LockFile), outputFile(t, out, compose.LockFile)) {
			t.Errorf("%s: a second build differs", stream)
		}
	}
}
