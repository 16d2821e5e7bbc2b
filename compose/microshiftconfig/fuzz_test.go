package microshiftconfig_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
)

func FuzzParseConfig(f *testing.F) {
	data, err := os.ReadFile(referenceConfig(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(""))
	f.Add([]byte("network:\n  clusterNetwork: [10.42.0.0/16, \"fd01::/48\"]\n  serviceNodePortRange: 30000-32767\nnode:\n  nodeIP: 10.0.0.1\n"))
	f.Add([]byte("apiServer:\n  subjectAltNames: [a, b]\ndebugging:\n  logLevel: Debug\ndns:\n  baseDomain: x\n"))
	f.Add([]byte("a: &a [1, 2]\nb: [*a, *a]\n"))
	f.Add([]byte("etcd: {memoryLimitMB: 1e400, y: 18446744073709551616}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const display = "fuzz/config.yaml"
		c, err := microshiftconfig.Parse(display, data)
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error is not one line: %q", msg)
			}
			if !strings.HasPrefix(msg, display+": ") {
				t.Fatalf("error does not start with %q: %q", display+": ", msg)
			}
			return
		}
		p := c.Params()
		if len(p.ClusterNetwork) == 0 || len(p.ServiceNetwork) == 0 || p.ServiceNodePortRange == "" || p.LogLevel == "" {
			t.Fatalf("accepted config with incomplete params %+v", p)
		}
		checkTree(t, c.Tree)
		// Parsing is deterministic.
		again, err := microshiftconfig.Parse(display, data)
		if err != nil || !reflect.DeepEqual(again.Tree, c.Tree) || !reflect.DeepEqual(again.Params(), p) {
			t.Fatalf("second Parse differs: %v", err)
		}
	})
}

// checkTree asserts the tree holds only what the catalog's TOML can hold:
// maps, lists, strings, bools, int64 and float64 (no json.Number).
func checkTree(t *testing.T, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			checkTree(t, e)
		}
	case []any:
		for _, e := range x {
			checkTree(t, e)
		}
	case nil, string, bool, int64, float64:
	default:
		t.Fatalf("tree holds %T", v)
	}
}
