package microshiftconfig_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// sharedDir is the shared upstream reference directory (../shared).
func sharedDir(t testing.TB) string { return testutil.Shared(t) }

func referenceConfig(t testing.TB) string {
	return filepath.Join(sharedDir(t), "reference", "microshift-config", "config.yaml.release-4.18")
}

// MicroShift's own fully commented default config documents the defaults
// this package applies.
func TestLoadReferenceConfig(t *testing.T) {
	path := referenceConfig(t)
	c, err := microshiftconfig.Load(path)
	if err != nil {
		t.Fatalf("Load(%s) = %v", path, err)
	}
	if c.Source != path {
		t.Errorf("Source = %q", c.Source)
	}
	p := c.Params()
	want := microshiftconfig.Defaults()
	want.SubjectAltNames = []string{} // the file lists none, explicitly
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Params() = %+v\nwant       %+v", p, want)
	}
	for _, tc := range []struct {
		got, want any
	}{
		{p.ClusterNetwork, []string{"10.42.0.0/16"}},
		{p.ServiceNetwork, []string{"10.43.0.0/16"}},
		{p.ServiceNodePortRange, "30000-32767"},
		{p.BaseDomain, "example.com"},
		{p.LogLevel, "Normal"},
		{p.NodeIP, ""},
		{p.NodeName, ""},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("got %#v, want %#v", tc.got, tc.want)
		}
	}
	// Whole numbers are int64, as in TOML catalogs.
	ingress := c.Tree["ingress"].(map[string]any)
	if got := ingress["ports"].(map[string]any)["http"]; got != int64(80) {
		t.Errorf("ingress.ports.http = %#v, want int64(80)", got)
	}
	if got := c.Tree["etcd"].(map[string]any)["memoryLimitMB"]; got != int64(0) {
		t.Errorf("etcd.memoryLimitMB = %#v, want int64(0)", got)
	}
	if got := c.Tree["storage"].(map[string]any)["optionalCsiComponents"]; !reflect.DeepEqual(got, []any{}) {
		t.Errorf("storage.optionalCsiComponents = %#v", got)
	}
	var sections []string
	for k := range c.Tree {
		sections = append(sections, k)
	}
	if len(sections) < 10 {
		t.Errorf("only %d sections parsed: %v", len(sections), sections)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, doc := range []string{"", " \n\t\n", "# nothing set\n", "---\n", "null\n", "~"} {
		c, err := microshiftconfig.Parse("c.yaml", []byte(doc))
		if err != nil {
			t.Errorf("Parse(%q) = %v", doc, err)
			continue
		}
		if len(c.Tree) != 0 || !reflect.DeepEqual(c.Params(), microshiftconfig.Defaults()) {
			t.Errorf("Parse(%q) = tree %v, params %+v; want empty and defaults", doc, c.Tree, c.Params())
		}
	}
	var nilConfig *microshiftconfig.Config
	if !reflect.DeepEqual(nilConfig.Params(), microshiftconfig.Defaults()) {
		t.Errorf("(*Config)(nil).Params() is not Defaults()")
	}
}

func TestParseValues(t *testing.T) {
	doc := `
network:
  clusterNetwork: [10.100.0.0/16, "fd01::/48"]
  serviceNetwork:
    - 10.101.0.0/16
    - fd02::/112
  serviceNodePortRange: 20000-20999
node:
  nodeIP: 192.168.1.10
  hostnameOverride: edge-1
dns:
  baseDomain: edge.example.org
apiServer:
  subjectAltNames: [api.edge.example.org, 192.168.1.10]
debugging:
  logLevel: TraceAll
etcd:
  memoryLimitMB: 256
  ratio: 0.5
  huge: 12345678901234567890
`
	c, err := microshiftconfig.Parse("c.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := microshiftconfig.Params{
		ClusterNetwork:       []string{"10.100.0.0/16", "fd01::/48"},
		ServiceNetwork:       []string{"10.101.0.0/16", "fd02::/112"},
		ServiceNodePortRange: "20000-20999",
		NodeIP:               "192.168.1.10",
		NodeName:             "edge-1",
		BaseDomain:           "edge.example.org",
		SubjectAltNames:      []string{"api.edge.example.org", "192.168.1.10"},
		LogLevel:             "TraceAll",
		ClusterURL:           "https://localhost:6443",
	}
	if got := c.Params(); !reflect.DeepEqual(got, want) {
		t.Errorf("Params() = %+v\nwant       %+v", got, want)
	}
	etcd := c.Tree["etcd"].(map[string]any)
	for k, v := range map[string]any{"memoryLimitMB": int64(256), "ratio": 0.5, "huge": 1.2345678901234567e19} {
		if etcd[k] != v {
			t.Errorf("etcd.%s = %#v (%T), want %#v (%T)", k, etcd[k], etcd[k], v, v)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"invalid YAML", "network: [\n", `invalid YAML: yaml: line 1: did not find expected node content`},
		{"unclosed flow list", "network:\n  clusterNetwork: [10.42.0.0/16\n", `invalid YAML: yaml: line 2: did not find expected ',' or ']'`},
		{"tab indentation", "network:\n\tcniPlugin: none\n", `invalid YAML: yaml: line 2: found character that cannot start any token`},
		// go-yaml reports the line where the duplicate's value starts: the
		// second "dns:" is on line 3, its mapping on line 4.
		{"duplicate section", "dns:\n  baseDomain: a.example.com\ndns:\n  baseDomain: b.example.com\n", `invalid YAML: yaml: unmarshal errors: line 4: key "dns" already set in map`},
		{"duplicate key", "network:\n  cniPlugin: none\n  cniPlugin: ovnk\n", `invalid YAML: yaml: unmarshal errors: line 3: key "cniPlugin" already set in map`},
		{"top-level list", "- network\n- dns\n", `the document must be a mapping of config sections, got a list`},
		{"top-level string", "network\n", `the document must be a mapping of config sections, got a string`},
		{"top-level number", "42\n", `the document must be a mapping of config sections, got a number`},
		{"network a list", "network:\n  - clusterNetwork\n", `network: must be a mapping, got a list`},
		{"clusterNetwork not a list", "network:\n  clusterNetwork: 10.42.0.0/16\n", `network.clusterNetwork: must be a list, got a string`},
		{"clusterNetwork entry not a string", "network:\n  clusterNetwork: [16]\n", `network.clusterNetwork[0]: must be a string, got a number`},
		{"clusterNetwork not CIDR", "network:\n  clusterNetwork: [10.42.0.0]\n", `network.clusterNetwork[0]: "10.42.0.0" is not a CIDR`},
		{"clusterNetwork bad prefix", "network:\n  clusterNetwork: [10.42.0.0/33]\n", `network.clusterNetwork[0]: "10.42.0.0/33" is not a CIDR`},
		{"clusterNetwork host bits", "network:\n  clusterNetwork: [10.42.1.0/16]\n", `network.clusterNetwork[0]: "10.42.1.0/16" has host bits set (did you mean "10.42.0.0/16"?)`},
		{"clusterNetwork IPv6 host bits", "network:\n  clusterNetwork: [10.42.0.0/16, \"fd01::1/48\"]\n", `network.clusterNetwork[1]: "fd01::1/48" has host bits set (did you mean "fd01::/48"?)`},
		{"clusterNetwork empty", "network:\n  clusterNetwork: []\n", `network.clusterNetwork: must list at least one CIDR`},
		{"clusterNetwork three entries", "network:\n  clusterNetwork: [10.42.0.0/16, \"fd01::/48\", 10.44.0.0/16]\n", `network.clusterNetwork: at most two CIDRs (one IPv4, one IPv6), got 3`},
		{"serviceNetwork not CIDR", "network:\n  serviceNetwork: [services]\n", `network.serviceNetwork[0]: "services" is not a CIDR`},
		{"dual stack cluster, single service", "network:\n  clusterNetwork: [10.42.0.0/16, \"fd01::/48\"]\n", `network.serviceNetwork: has 1 CIDR and network.clusterNetwork 2; MicroShift needs one service network per cluster network (dual stack needs both dual)`},
		{"families in another order", "network:\n  clusterNetwork: [10.42.0.0/16, \"fd01::/48\"]\n  serviceNetwork: [\"fd02::/112\", 10.43.0.0/16]\n", `network.serviceNetwork[0]: fd02::/112 is not in the IP family of network.clusterNetwork[0] 10.42.0.0/16`},
		{"service network too small", "network:\n  serviceNetwork: [10.43.0.0/29]\n", `network.serviceNetwork[0]: 10.43.0.0/29 is too small: MicroShift needs at least 10 service addresses (a /28 or larger)`},
		{"serviceNodePortRange number", "network:\n  serviceNodePortRange: 30000\n", `network.serviceNodePortRange: must be a string, got a number`},
		{"serviceNodePortRange malformed", "network:\n  serviceNodePortRange: \"30000\"\n", `network.serviceNodePortRange: "30000" is not a port range such as 30000-32767`},
		{"serviceNodePortRange words", "network:\n  serviceNodePortRange: low-high\n", `network.serviceNodePortRange: "low-high" is not a port range such as 30000-32767`},
		{"serviceNodePortRange reversed", "network:\n  serviceNodePortRange: 32767-30000\n", `network.serviceNodePortRange: "32767-30000" must be from-to with 1 <= from <= to <= 65535`},
		{"serviceNodePortRange from zero", "network:\n  serviceNodePortRange: 0-1000\n", `network.serviceNodePortRange: "0-1000" must be from-to with 1 <= from <= to <= 65535`},
		{"serviceNodePortRange too high", "network:\n  serviceNodePortRange: 30000-65536\n", `network.serviceNodePortRange: "30000-65536" must be from-to with 1 <= from <= to <= 65535`},
		{"nodeIP invalid", "node:\n  nodeIP: 10.0.0.300\n", `node.nodeIP: "10.0.0.300" is not an IP address`},
		{"nodeIP CIDR", "node:\n  nodeIP: 10.0.0.3/24\n", `node.nodeIP: "10.0.0.3/24" is not an IP address`},
		{"nodeIP not a string", "node:\n  nodeIP: [10.0.0.3]\n", `node.nodeIP: must be a string, got a list`},
		{"node not a mapping", "node: edge-1\n", `node: must be a mapping, got a string`},
		{"hostnameOverride not a string", "node:\n  hostnameOverride: true\n", `node.hostnameOverride: must be a string, got a boolean`},
		{"baseDomain not a string", "dns:\n  baseDomain: {name: x}\n", `dns.baseDomain: must be a string, got a mapping`},
		{"logLevel invalid", "debugging:\n  logLevel: verbose\n", `debugging.logLevel: "verbose" is not one of Normal, Debug, Trace, TraceAll`},
		{"logLevel number", "debugging:\n  logLevel: 4\n", `debugging.logLevel: must be a string, got a number`},
		{"subjectAltNames a string", "apiServer:\n  subjectAltNames: api.example.com\n", `apiServer.subjectAltNames: must be a list, got a string`},
		{"subjectAltNames entry a mapping", "apiServer:\n  subjectAltNames:\n    - name: api.example.com\n", `apiServer.subjectAltNames[0]: must be a string, got a mapping`},
		{"subjectAltNames entry blank", "apiServer:\n  subjectAltNames: [api.example.com, \"  \"]\n", `apiServer.subjectAltNames[1]: a name of spaces only`},
		{"clusterNetwork two IPv4", "network:\n  clusterNetwork: [10.42.0.0/16, 10.44.0.0/16]\n", `network.clusterNetwork: two CIDRs must be one IPv4 and one IPv6 (dual stack), got 10.42.0.0/16 and 10.44.0.0/16`},
		{"service network inside the cluster network", "network:\n  serviceNetwork: [10.42.128.0/24]\n", `network.serviceNetwork[0]: 10.42.128.0/24 overlaps network.clusterNetwork[0] 10.42.0.0/16`},
		{"baseDomain uppercase", "dns:\n  baseDomain: Example.COM\n", `dns.baseDomain: "Example.COM" is not a DNS domain (lowercase letters, digits, '-' and '.', RFC 1123)`},
		{"baseDomain with underscore", "dns:\n  baseDomain: my_edge.example.com\n", `dns.baseDomain: "my_edge.example.com" is not a DNS domain (lowercase letters, digits, '-' and '.', RFC 1123)`},
		{"hostnameOverride invalid", "node:\n  hostnameOverride: Edge_1\n", `node.hostnameOverride: "Edge_1" is not a valid node name (lowercase DNS subdomain, RFC 1123)`},
		{"nodeIPv6 an IPv4 address", "node:\n  nodeIPv6: 10.0.0.1\n", `node.nodeIPv6: "10.0.0.1" is not an IPv6 address`},
		{"nodeIPv6 without dual stack", "node:\n  nodeIPv6: fd00::1\n", `node.nodeIPv6: "fd00::1" is set but the cluster is not dual stack: MicroShift takes it only with an IPv4 and an IPv6 network.clusterNetwork`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := microshiftconfig.Parse("cfg/config.yaml", []byte(tc.doc))
			if err == nil {
				t.Fatalf("Parse() = %+v, nil; want error", c.Params())
			}
			if want := "cfg/config.yaml: " + tc.want; err.Error() != want {
				t.Errorf("Parse() error:\n got: %s\nwant: %s", err, want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("#", microshiftconfig.MaxSize+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("- netwrk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	for _, tc := range []struct {
		path, want string
	}{
		{missing, "config " + missing + " does not exist"},
		{dir, "config " + dir + " is not a regular file (a directory)"},
		{big, big + ": file is larger than 1048576 bytes"},
		{bad, bad + `: the document must be a mapping of config sections, got a list`},
	} {
		_, err := microshiftconfig.Load(tc.path)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Load(%s) = %v, want %q", tc.path, err, tc.want)
		}
	}
}
