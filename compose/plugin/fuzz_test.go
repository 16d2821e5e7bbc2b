package plugin_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose/plugin"
)

func FuzzParseOutput(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: a\ndata:\n  k: v\n"))
	f.Add([]byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- manifests\n"))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: a\n"))
	f.Add([]byte("Deploying... done: [ok\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("---\n---\n- x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := plugin.ParseOutput(data)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if out.Kustomization != nil && out.Resources != nil {
			t.Fatalf("output is both a kustomization and resources")
		}
		if !out.Empty() && out.Kustomization == nil && !bytes.Equal(out.Resources, data) {
			t.Fatalf("resources are not the plugin's bytes")
		}
		again, err := plugin.ParseOutput(data)
		if err != nil || again.Documents != out.Documents {
			t.Fatalf("second parse differs: %v", err)
		}
	})
}
