package microshiftconfig_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
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

// FuzzConfigForRelease checks a config against the oldest and the newest
// release's rules: errors are one line naming the file; what passes prunes
// to changes that pass the rules again, and pruning is stable.
func FuzzConfigForRelease(f *testing.F) {
	for _, branch := range []string{"release-4.14", "release-4.18", "main"} {
		if testutil.HaveShared() {
			data, err := os.ReadFile(testutil.Shared(f, "reference", "microshift-config", "config.yaml."+branch))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte("network:\n  cniPlugin: none\n  multus:\n    status: Enabled\nstorage:\n  driver: none\n  optionalCsiComponents: [none]\n"))
	f.Add([]byte("clusterToCluster:\n  remoteClusters:\n  - nextHop: [192.168.1.20]\n    clusterNetwork: [10.45.0.0/16]\n    serviceNetwork: [10.46.0.0/16]\n"))
	f.Add([]byte("genericDevicePlugin:\n  devices:\n  - name: s\n    groups:\n    - paths:\n      - path: /dev/x\n        permissions: mrw\n"))
	f.Add([]byte("dns:\n  resources:\n    requests: {cpu: 100m, memory: 128Mi}\n"))
	f.Add([]byte("apiServer:\n  featureGates:\n    featureSet: CustomNoUpgrade\n    customNoUpgrade:\n      enabled: [A]\n"))
	oldest, newest := rulesFor(f, "4.14.0"), rulesFor(f, "5.0.0")
	f.Fuzz(func(t *testing.T, data []byte) {
		const display = "fuzz/config.yaml"
		c, err := microshiftconfig.Parse(display, data)
		if err != nil {
			return // FuzzParseConfig covers parse errors
		}
		for _, rules := range []*knowledge.Rules{oldest, newest} {
			s, err := c.For(rules)
			if err != nil {
				if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, display+": ") {
					t.Fatalf("error is not one line naming the file: %q", msg)
				}
				continue
			}
			if err := microshiftconfig.Check(rules, s.Changes); err != nil {
				t.Fatalf("pruned changes break the rules they passed: %v\n%#v", err, s.Changes)
			}
			again, err := (&microshiftconfig.Config{Source: display, Tree: s.Changes}).For(rules)
			if err != nil || !reflect.DeepEqual(again.Changes, s.Changes) {
				t.Fatalf("pruning is not stable: %v\n%#v\n%#v", err, s.Changes, again)
			}
		}
	})
}
