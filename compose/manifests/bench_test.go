package manifests

import (
	"fmt"
	"strings"
	"testing"
)

// scaleStream is a plugin's output of n resources: one Deployment with a
// container image to three ConfigMaps it reads, in one namespace.
func scaleStream(n int) []byte {
	var b strings.Builder
	for i := range n {
		if i%4 == 0 {
			fmt.Fprintf(&b, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app%d\n  namespace: edge\nspec:\n  selector:\n    matchLabels: {app: app%d}\n  template:\n    metadata:\n      labels: {app: app%d}\n    spec:\n      containers:\n      - name: main\n        image: quay.io/example/app:latest\n        envFrom:\n        - configMapRef: {name: cm%d}\n", i, i, i, i+1)
			continue
		}
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%d\n  namespace: edge\ndata:\n  key: value%d\n", i, i)
	}
	return []byte(b.String())
}

// smallConfigMaps is n minimal ConfigMaps: the campaign's 30k case.
func smallConfigMaps(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\ndata:\n  k: v\n", i)
	}
	return []byte(b.String())
}

// BenchmarkRenderScale renders a plugin's stream of 1k to 10k resources
// with the images override, as a build does (make bench prints it). It
// was quadratic inside kustomize; batches make it linear.
func BenchmarkRenderScale(b *testing.B) {
	for _, n := range []int{1000, 2000, 4000, 10000} {
		b.Run(fmt.Sprintf("%d", n), func(b *testing.B) {
			benchRender(b, scaleStream(n), n)
		})
	}
	b.Run("30000-configmaps", func(b *testing.B) {
		benchRender(b, smallConfigMaps(30000), 30000)
	})
}

func benchRender(b *testing.B, stream []byte, n int) {
	j, err := Prepare(Input{Component: "bench", Resources: stream, Images: testPins})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := j.Render()
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Resources) != n {
			b.Fatalf("%d resources rendered, want %d", len(res.Resources), n)
		}
	}
}
