package manifests

import (
	"strings"
	"testing"
	"unicode/utf8"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// FuzzRender renders a plugin's output (a resource stream, in batches of
// 2 so that the batch path runs too): no panic, every error one line, and
// what renders has valid names, files named as kustomize names them, and
// a kustomization.yaml that lists exactly them.
func FuzzRender(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: x\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: quay.io/example/app\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: s\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"a\\nb\"\n"))
	f.Add([]byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: system:x\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		old := BatchSize
		BatchSize = 2
		defer func() { BatchSize = old }()
		j, err := Prepare(Input{Component: "fuzz", Resources: data, Images: testPins})
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("Prepare error is not one line: %q", err)
			}
			return
		}
		res, err := j.Render()
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("Render error is not one line: %q", err)
			}
			return
		}
		var k struct {
			Resources []string `json:"resources"`
		}
		if err := yaml.Unmarshal(res.Kustomization, &k); err != nil {
			t.Fatalf("kustomization.yaml does not parse: %v\n%s", err, res.Kustomization)
		}
		if len(k.Resources) != len(res.Resources) {
			t.Fatalf("kustomization.yaml lists %d files for %d resources", len(k.Resources), len(res.Resources))
		}
		for i, r := range res.Resources {
			if err := checkNames(r); err != nil {
				t.Fatalf("rendered %s with an invalid name: %v", r.ID(), err)
			}
			if k.Resources[i] != r.File || strings.ContainsAny(r.File, "/\\\n\r ") {
				t.Fatalf("resource %d is listed as %q, written as %q", i, k.Resources[i], r.File)
			}
		}
	})
}

// FuzzPinArgs pins an arbitrary argument and environment value: no panic,
// a value pinned only when an images: entry names its image (then with
// the entry's digest), every other value left as it was.
func FuzzPinArgs(f *testing.F) {
	f.Add("--solver-image=quay.io/x/solver:v1")
	f.Add("quay.io/x/solver@sha256:0000000000000000000000000000000000000000000000000000000000000000")
	f.Add("--url=https://quay.io/x/solver:v1")
	f.Add("-=")
	f.Add("quay.io/x/solver:")
	pins := []types.Image{{Name: "quay.io/x/solver", Digest: "sha256:2222222222222222222222222222222222222222222222222222222222222222"}}
	f.Fuzz(func(t *testing.T, arg string) {
		if !utf8.ValidString(arg) {
			return // YAML holds text: kustomize gives no other
		}
		var n yaml3.Node
		doc := map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "args": []any{arg}, "env": []any{map[string]any{"name": "E", "value": arg}}}}}}
		if err := n.Encode(doc); err != nil {
			return
		}
		pinArgs(&n, pins)
		var out struct {
			Spec struct {
				Containers []struct {
					Args []string `yaml:"args"`
					Env  []struct {
						Value string `yaml:"value"`
					} `yaml:"env"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		}
		if err := n.Decode(&out); err != nil {
			t.Fatalf("decoding the pinned node: %v", err)
		}
		c := out.Spec.Containers[0]
		for _, got := range []string{c.Args[0], c.Env[0].Value} {
			prefix, ref := argImage(arg)
			if ref != "" && imageName(ref) == "quay.io/x/solver" {
				if got != prefix+"quay.io/x/solver@"+pins[0].Digest {
					t.Fatalf("%q pinned to %q", arg, got)
				}
			} else if got != arg {
				t.Fatalf("%q changed to %q", arg, got)
			}
		}
	})
}
