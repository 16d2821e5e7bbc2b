// Package microshiftconfig reads a user's MicroShift config.yaml and checks
// MicroShift config against the rules of one release (releases/knowledge):
// every key the release has, its type, allowed values and formats, and the
// rules that span keys, each error naming the field path. It also says which
// values change nothing (unset, zero or equal to MicroShift's default), so
// that a plan writes only what matters. The fields microshift-compose itself
// uses (networks, node port range, node identity, base domain, SANs, log
// level) are read into Params.
package microshiftconfig

import (
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/text"

	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// MaxSize bounds a config file; MicroShift's fully commented default is 15 KB.
const MaxSize = 1 << 20

// LogLevels are the values MicroShift accepts for debugging.logLevel.
var LogLevels = []string{"Normal", "Debug", "Trace", "TraceAll"}

// isDNSSubdomain is RFC 1123, by Kubernetes' own check (MicroShift checks
// domains with it): what baseDomain and node names must be.
func isDNSSubdomain(s string) bool { return len(validation.IsDNS1123Subdomain(s)) == 0 }

// Params are the config values the tool uses, defaults applied. They feed
// the firewall, file templates and plugin environments.
type Params struct {
	ClusterNetwork       []string
	ServiceNetwork       []string
	ServiceNodePortRange string
	NodeIP               string
	NodeName             string
	BaseDomain           string
	SubjectAltNames      []string
	LogLevel             string
	// ClusterURL is the API server URL MicroShift serves on the node.
	ClusterURL string
}

// Defaults are MicroShift's own defaults for Params.
func Defaults() Params {
	return Params{
		ClusterNetwork:       []string{"10.42.0.0/16"},
		ServiceNetwork:       []string{"10.43.0.0/16"},
		ServiceNodePortRange: "30000-32767",
		BaseDomain:           "example.com",
		LogLevel:             "Normal",
		ClusterURL:           "https://localhost:6443",
	}
}

// Config is a parsed config.yaml.
type Config struct {
	// Source is the file path, for messages.
	Source string
	// Tree is the document as nested maps; numbers that are whole are int64.
	Tree   map[string]any
	params Params
}

// Params returns the values the tool uses, with MicroShift defaults for
// what the file leaves unset. A nil Config gives the defaults.
func (c *Config) Params() Params {
	if c == nil {
		return Defaults()
	}
	return c.params
}

// Value returns the value the file sets at a dotted path, even one that
// changes nothing on the device; false when unset or null.
func (c *Config) Value(path string) (any, bool) {
	if c == nil {
		return nil, false
	}
	v, ok, err := reader{tree: c.Tree}.get(path)
	return v, ok && err == nil
}

// Load reads and checks a config.yaml.
func Load(path string) (*Config, error) {
	data, err := inputfile.Read("config", path, MaxSize)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse checks a config.yaml document; display names it in errors.
func Parse(display string, data []byte) (*Config, error) {
	c := &Config{Source: display, Tree: map[string]any{}}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := inputfile.CheckYAMLDocument(data); err != nil {
			return nil, fmt.Errorf("%s: %w", display, err)
		}
		if err := inputfile.CheckYAMLKeys(data); err != nil {
			return nil, fmt.Errorf("%s: invalid YAML: %w", display, err)
		}
		js, err := yaml.YAMLToJSONStrict(data)
		if err != nil {
			return nil, fmt.Errorf("%s: invalid YAML: %s", display, text.OneLine(strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")))
		}
		var doc any
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("%s: invalid YAML: %v", display, err)
		}
		switch v := doc.(type) {
		case nil:
		case map[string]any:
			tree, err := normalize(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", display, err)
			}
			c.Tree = tree.(map[string]any)
			if err := checkText("", c.Tree); err != nil {
				return nil, fmt.Errorf("%s: %v", display, err)
			}
		default:
			return nil, fmt.Errorf("%s: the document must be a mapping of config sections, got %s", display, kind(doc))
		}
	}
	p, err := readParams(c.Tree)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", display, err)
	}
	c.params = p
	return c, nil
}

func readParams(tree map[string]any) (Params, error) {
	p := Defaults()
	r := reader{tree: tree}
	if v, ok, err := r.cidrs("network.clusterNetwork"); err != nil {
		return p, err
	} else if ok {
		p.ClusterNetwork = v
	}
	if v, ok, err := r.cidrs("network.serviceNetwork"); err != nil {
		return p, err
	} else if ok {
		p.ServiceNetwork = v
	}
	if v, ok, err := r.str("network.serviceNodePortRange"); err != nil {
		return p, err
	} else if ok {
		if err := checkPortRange(v); err != nil {
			return p, fmt.Errorf("network.serviceNodePortRange: %q %v", v, err)
		}
		p.ServiceNodePortRange = v
	}
	if v, ok, err := r.str("node.nodeIP"); err != nil {
		return p, err
	} else if ok && v != "" {
		if _, err := netip.ParseAddr(v); err != nil {
			return p, fmt.Errorf("node.nodeIP: %q is not an IP address", v)
		}
		p.NodeIP = v
	}
	nodeIPv6 := ""
	if v, ok, err := r.str("node.nodeIPv6"); err != nil {
		return p, err
	} else if ok && v != "" {
		if a, err := netip.ParseAddr(v); err != nil || !a.Is6() || a.Is4In6() {
			return p, fmt.Errorf("node.nodeIPv6: %q is not an IPv6 address", v)
		}
		nodeIPv6 = v
	}
	if v, ok, err := r.str("node.hostnameOverride"); err != nil {
		return p, err
	} else if ok {
		if v != "" && !isDNSSubdomain(v) {
			return p, fmt.Errorf("node.hostnameOverride: %q is not a valid node name (lowercase DNS subdomain, RFC 1123)", v)
		}
		p.NodeName = v
	}
	if v, ok, err := r.str("dns.baseDomain"); err != nil {
		return p, err
	} else if ok && v != "" {
		if !isDNSSubdomain(v) {
			return p, fmt.Errorf("dns.baseDomain: %q is not a DNS domain (lowercase letters, digits, '-' and '.', RFC 1123)", v)
		}
		p.BaseDomain = v
	}
	if v, ok, err := r.strs("apiServer.subjectAltNames"); err != nil {
		return p, err
	} else if ok {
		// MicroShift's default files of 4.14-4.17 list [""]: no name.
		names := []string{}
		for i, s := range v {
			switch {
			case s == "":
			case strings.TrimSpace(s) == "":
				return p, fmt.Errorf("apiServer.subjectAltNames[%d]: a name of spaces only", i)
			default:
				names = append(names, s)
			}
		}
		p.SubjectAltNames = names
	}
	// MicroShift takes a second node address only for a dual-stack
	// cluster (and refuses one otherwise).
	if nodeIPv6 != "" && len(p.ClusterNetwork) < 2 {
		return p, fmt.Errorf("node.nodeIPv6: %q is set but the cluster is not dual stack: MicroShift takes it only with an IPv4 and an IPv6 network.clusterNetwork", nodeIPv6)
	}
	if err := checkNetworks(p.ClusterNetwork, p.ServiceNetwork); err != nil {
		return p, err
	}
	if v, ok, err := r.str("debugging.logLevel"); err != nil {
		return p, err
	} else if ok && v != "" {
		if !slices.ContainsFunc(LogLevels, func(l string) bool { return strings.EqualFold(l, v) }) {
			return p, fmt.Errorf("debugging.logLevel: %q is not one of %s", v, strings.Join(LogLevels, ", "))
		}
		p.LogLevel = v
	}
	return p, nil
}

// checkNetworks checks the pod and service networks as MicroShift does:
// at most one IPv4 and one IPv6 CIDR each, as many service as cluster
// networks in the same IP family order (MicroShift 4.17+ crashes on a
// dual-stack cluster network with a single-stack service network), a
// service network with room for the addresses MicroShift takes from it,
// and no overlap (MicroShift would route one into the other).
func checkNetworks(cluster, service []string) error {
	for _, n := range []struct {
		path  string
		cidrs []string
	}{{"network.clusterNetwork", cluster}, {"network.serviceNetwork", service}} {
		if len(n.cidrs) == 2 {
			a, b := netip.MustParsePrefix(n.cidrs[0]), netip.MustParsePrefix(n.cidrs[1])
			if a.Addr().Is4() == b.Addr().Is4() {
				return fmt.Errorf("%s: two CIDRs must be one IPv4 and one IPv6 (dual stack), got %s and %s", n.path, n.cidrs[0], n.cidrs[1])
			}
		}
	}
	if len(cluster) != len(service) {
		return fmt.Errorf("network.serviceNetwork: has %d %s and network.clusterNetwork %d; MicroShift needs one service network per cluster network (dual stack needs both dual)",
			len(service), text.Plural(len(service), "CIDR", "CIDRs"), len(cluster))
	}
	for i := range cluster {
		c, s := netip.MustParsePrefix(cluster[i]), netip.MustParsePrefix(service[i])
		if c.Addr().Is4() != s.Addr().Is4() {
			return fmt.Errorf("network.serviceNetwork[%d]: %s is not in the IP family of network.clusterNetwork[%d] %s", i, service[i], i, cluster[i])
		}
	}
	for i, s := range service {
		if p := netip.MustParsePrefix(s); p.Addr().BitLen()-p.Bits() < 4 {
			return fmt.Errorf("network.serviceNetwork[%d]: %s is too small: MicroShift needs at least 10 service addresses (a /28 or larger)", i, s)
		}
	}
	for i, c := range cluster {
		for j, s := range service {
			if netip.MustParsePrefix(c).Overlaps(netip.MustParsePrefix(s)) {
				return fmt.Errorf("network.serviceNetwork[%d]: %s overlaps network.clusterNetwork[%d] %s", j, s, i, c)
			}
		}
	}
	return nil
}

func checkPortRange(s string) error {
	from, to, ok := strings.Cut(s, "-")
	if !ok {
		return errors.New("is not a port range such as 30000-32767")
	}
	lo, err1 := strconv.Atoi(from)
	hi, err2 := strconv.Atoi(to)
	if err1 != nil || err2 != nil {
		return errors.New("is not a port range such as 30000-32767")
	}
	if lo < 1 || hi > 65535 || lo > hi {
		return errors.New("must be from-to with 1 <= from <= to <= 65535")
	}
	return nil
}

// reader fetches typed values by dotted path, naming the path on type errors.
type reader struct{ tree map[string]any }

func (r reader) get(path string) (any, bool, error) {
	var cur any = r.tree
	parts := strings.Split(path, ".")
	for i, part := range parts {
		m, ok := cur.(map[string]any)
		if !ok {
			if cur == nil {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("%s: must be a mapping, got %s", strings.Join(parts[:i], "."), kind(cur))
		}
		cur, ok = m[part]
		if !ok {
			return nil, false, nil
		}
	}
	if cur == nil {
		return nil, false, nil
	}
	return cur, true, nil
}

func (r reader) str(path string) (string, bool, error) {
	v, ok, err := r.get(path)
	if err != nil || !ok {
		return "", false, err
	}
	s, isStr := v.(string)
	if !isStr {
		return "", false, fmt.Errorf("%s: must be a string, got %s", path, kind(v))
	}
	return s, true, nil
}

func (r reader) strs(path string) ([]string, bool, error) {
	v, ok, err := r.get(path)
	if err != nil || !ok {
		return nil, false, err
	}
	list, isList := v.([]any)
	if !isList {
		return nil, false, fmt.Errorf("%s: must be a list, got %s", path, kind(v))
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, isStr := e.(string)
		if !isStr {
			return nil, false, fmt.Errorf("%s[%d]: must be a string, got %s", path, i, kind(e))
		}
		out = append(out, s)
	}
	return out, true, nil
}

func (r reader) cidrs(path string) ([]string, bool, error) {
	list, ok, err := r.strs(path)
	if err != nil || !ok {
		return nil, false, err
	}
	if len(list) == 0 {
		return nil, false, fmt.Errorf("%s: must list at least one CIDR", path)
	}
	if len(list) > 2 {
		return nil, false, fmt.Errorf("%s: at most two CIDRs (one IPv4, one IPv6), got %d", path, len(list))
	}
	for i, s := range list {
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, false, fmt.Errorf("%s[%d]: %q is not a CIDR", path, i, s)
		}
		if pfx.Masked() != pfx {
			return nil, false, fmt.Errorf("%s[%d]: %q has host bits set (did you mean %q?)", path, i, s, pfx.Masked().String())
		}
	}
	return list, true, nil
}

// normalize turns json.Number into int64 (whole) or float64, recursively,
// so values compare equal to the ones decoded from TOML catalogs.
// checkText refuses keys and strings with control characters anywhere in
// the tree: they reach the drop-in the device reads (a path with a BEL in
// manifests.kustomizePaths) and messages.
func checkText(at string, v any) error {
	join := func(k string) string {
		if at == "" {
			return k
		}
		return at + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if text.HasUnsafe(k) {
				return fmt.Errorf("key %q holds a control character", join(k))
			}
			if err := checkText(join(k), x[k]); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := checkText(fmt.Sprintf("%s[%d]", at, i), e); err != nil {
				return err
			}
		}
	case string:
		if text.HasUnsafe(x) {
			return fmt.Errorf("%s: %q holds a control character", at, x)
		}
	}
	return nil
}

func normalize(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			n, err := normalize(e)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := normalize(e)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %s is out of range", x)
		}
		return f, nil
	}
	return v, nil
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64, json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}
