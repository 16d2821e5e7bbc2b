package components_test

import (
	"reflect"
	"sort"
	"testing"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/releases"
)

func TestDefault(t *testing.T) {
	cat, err := components.Default()
	if err != nil {
		t.Fatalf("Default() = %v", err)
	}
	// Apply order: order prefix, then name.
	wantOrder := []string{
		"core", "olm", "gateway-api", "multus", "networking-ovnk", "networking-bridge",
		"kube-proxy", "storage-hostpath", "storage-lvms", "snapshot-controller", "ai-model-serving", "cert-manager", "sriov",
		"metrics-server", "kube-state-metrics", "node-exporter",
	}
	if got := cat.ComponentNames(); !reflect.DeepEqual(got, wantOrder) {
		t.Errorf("ComponentNames() = %v\nwant %v", got, wantOrder)
	}
	wantProfiles := map[string][]string{
		"minimal":         {"core"},
		"networking-only": {"core", "networking-ovnk"},
		"storage-only":    {"core", "storage-lvms"},
		"full":            {"core", "networking-ovnk", "storage-lvms", "snapshot-controller"},
	}
	if got := cat.ProfileNames(); !reflect.DeepEqual(got, []string{"full", "minimal", "networking-only", "storage-only"}) {
		t.Errorf("ProfileNames() = %v", got)
	}
	for n, want := range wantProfiles {
		p := cat.Profiles[n]
		if p == nil || !reflect.DeepEqual(p.Components, want) || p.Description == "" {
			t.Errorf("profile %s = %+v, want components %v", n, p, want)
			continue
		}
		if p.Source != "embedded catalog: catalog.toml" {
			t.Errorf("profile %s source = %q", n, p.Source)
		}
	}
	if got := cat.CapabilityNames(); !reflect.DeepEqual(got, []string{"cni", "csi"}) {
		t.Errorf("CapabilityNames() = %v", got)
	}
	for _, tc := range []struct {
		capability, def string
		providers       []string
	}{
		{"cni", "networking-ovnk", []string{"networking-bridge", "networking-ovnk"}},
		{"csi", "storage-lvms", []string{"storage-hostpath", "storage-lvms"}},
	} {
		c := cat.Capabilities[tc.capability]
		if c == nil || c.Default != tc.def {
			t.Errorf("capability %s = %+v, want default %s", tc.capability, c, tc.def)
		}
		if got := cat.Providers(tc.capability); !reflect.DeepEqual(got, tc.providers) {
			t.Errorf("Providers(%s) = %v, want %v", tc.capability, got, tc.providers)
		}
	}
	if got := cat.Providers("gpu"); got != nil {
		t.Errorf("Providers(gpu) = %v, want none", got)
	}
}

func TestDefaultComponents(t *testing.T) {
	cat, err := components.Default()
	if err != nil {
		t.Fatal(err)
	}
	both := []releases.Arch{releases.X86_64, releases.AArch64}
	for _, tc := range []struct {
		name      string
		order     int
		arches    []releases.Arch
		release   string
		requires  []string
		file      string
		keys      int
		packages0 string
	}{
		{"core", 0, both, ">=4.14", nil, "", 6, "microshift"},
		{"olm", 1, both, ">=4.15", []string{"core"}, "olm", 3, "microshift-olm"},
		{"gateway-api", 2, both, ">=4.18", []string{"core"}, "gateway-api", 7, "microshift-gateway-api"},
		{"multus", 4, both, ">=4.16", []string{"core", "cni"}, "multus", 2, "microshift-multus"},
		{"networking-ovnk", 5, both, ">=4.14", []string{"core"}, "", 1, "microshift-networking"},
		{"networking-bridge", 6, both, "", []string{"core", "kube-proxy"}, "", 0, "containernetworking-plugins"},
		{"kube-proxy", 8, both, ">=4.18", []string{"core"}, "kube-proxy", 1, ""},
		{"storage-hostpath", 9, both, ">=4.14", []string{"core"}, "storage-hostpath", 4, ""},
		{"storage-lvms", 10, both, ">=4.14", []string{"core"}, "", 1, "lvm2"},
		{"snapshot-controller", 11, both, ">=4.14", []string{"csi"}, "", 1, ""},
		{"ai-model-serving", 50, []releases.Arch{releases.X86_64}, ">=4.19", []string{"core"}, "ai-model-serving", 20, "microshift-ai-model-serving"},
		{"cert-manager", 60, both, ">=4.19", []string{"core"}, "cert-manager", 7, "microshift-cert-manager"},
		{"sriov", 70, both, ">=4.19", []string{"core", "multus"}, "sriov", 10, "microshift-sriov"},
		{"metrics-server", 80, both, ">=4.19", []string{"core"}, "metrics-server", 1, "microshift-metrics-server"},
		{"kube-state-metrics", 81, both, ">=4.19", []string{"core"}, "kube-state-metrics", 1, "microshift-kube-state-metrics"},
		{"node-exporter", 82, both, ">=4.19", []string{"core"}, "node-exporter", 1, "microshift-node-exporter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cat.Components[tc.name]
			if c == nil {
				t.Fatalf("component %s missing", tc.name)
			}
			if c.Name != tc.name || c.Order != tc.order || c.Release != tc.release || c.Description == "" {
				t.Errorf("got name %q order %d release %q", c.Name, c.Order, c.Release)
			}
			if (c.Constraint == nil) != (tc.release == "") {
				t.Errorf("Constraint = %v for release %q", c.Constraint, tc.release)
			}
			if !reflect.DeepEqual(c.Arches, tc.arches) {
				t.Errorf("arches = %v, want %v", c.Arches, tc.arches)
			}
			if !reflect.DeepEqual(c.Requires, tc.requires) {
				t.Errorf("requires = %v, want %v", c.Requires, tc.requires)
			}
			if c.Images.File != tc.file || len(c.Images.Keys) != tc.keys {
				t.Errorf("images = %q with %d keys, want %q with %d", c.Images.File, len(c.Images.Keys), tc.file, tc.keys)
			}
			if tc.packages0 == "" {
				if len(c.Packages) != 0 {
					t.Errorf("packages = %v, want none", c.Packages)
				}
			} else if len(c.Packages) == 0 || c.Packages[0] != tc.packages0 {
				t.Errorf("packages = %v, want %s first", c.Packages, tc.packages0)
			}
			if want := "embedded catalog: components/" + tc.name + "/component.toml"; c.Source != want || c.Dir != "" || c.FS == nil {
				t.Errorf("source %q dir %q FS %v, want %q, no dir, an FS", c.Source, c.Dir, c.FS, want)
			}
		})
	}
}

// The MicroShift config each component sets when selected and when left
// out: this is what makes a minimal image really minimal.
func TestDefaultConfig(t *testing.T) {
	cat, err := components.Default()
	if err != nil {
		t.Fatal(err)
	}
	m := func(section, key string, v any) map[string]any {
		return map[string]any{section: map[string]any{key: v}}
	}
	for _, tc := range []struct {
		name              string
		selected, omitted map[string]any
	}{
		{"networking-ovnk", m("network", "cniPlugin", "ovnk"), m("network", "cniPlugin", "none")},
		{"networking-bridge", m("network", "cniPlugin", "none"), nil},
		{"storage-lvms", m("storage", "driver", "lvms"), m("storage", "driver", "none")},
		{"snapshot-controller", m("storage", "optionalCsiComponents", []any{"snapshot-controller"}), m("storage", "optionalCsiComponents", []any{"none"})},
		{"multus", m("network", "multus", map[string]any{"status": "Managed"}), m("network", "multus", map[string]any{"status": "Removed"})},
		{"core", nil, nil},
	} {
		c := cat.Components[tc.name]
		if !reflect.DeepEqual(c.Config.Selected, tc.selected) {
			t.Errorf("%s config.selected = %#v, want %#v", tc.name, c.Config.Selected, tc.selected)
		}
		if !reflect.DeepEqual(c.Config.Omitted, tc.omitted) {
			t.Errorf("%s config.omitted = %#v, want %#v", tc.name, c.Config.Omitted, tc.omitted)
		}
	}
	core := cat.Components["core"]
	if !reflect.DeepEqual(core.Firewall.TrustedSources, []string{"cluster-network", "169.254.169.1"}) {
		t.Errorf("core trusted sources = %v", core.Firewall.TrustedSources)
	}
	if !reflect.DeepEqual(core.Services.Enabled, []string{"microshift"}) {
		t.Errorf("core services = %v", core.Services.Enabled)
	}
	bridge := cat.Components["networking-bridge"]
	if len(bridge.Files) != 1 || bridge.Files[0].Path != "/etc/cni/net.d/10-microshift-bridge.conflist" || !bridge.Files[0].Template || bridge.Files[0].Mode != "0644" {
		t.Errorf("networking-bridge files = %+v", bridge.Files)
	}
	if !reflect.DeepEqual(bridge.Conflicts, []string{"networking-ovnk"}) || !reflect.DeepEqual(bridge.Provides, []string{"cni"}) {
		t.Errorf("networking-bridge provides %v conflicts %v", bridge.Provides, bridge.Conflicts)
	}
}

func TestDefaultReleaseProblems(t *testing.T) {
	cat, err := components.Default()
	if err != nil {
		t.Fatal(err)
	}
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) != 2 {
		t.Fatalf("%d embedded releases", len(rels))
	}
	for _, r := range rels {
		if probs := cat.ReleaseProblems(r); len(probs) != 0 {
			t.Errorf("ReleaseProblems(%s) = %v, want none", r, probs)
		}
	}
}

func TestSupports(t *testing.T) {
	cat, err := components.Default()
	if err != nil {
		t.Fatal(err)
	}
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	byStream := map[string]*releases.Release{}
	for _, r := range rels {
		byStream[r.Stream()] = r
	}
	for _, tc := range []struct {
		name      string
		x86, arm  bool
		r418, r50 bool
	}{
		{"core", true, true, true, true},
		{"ai-model-serving", true, false, false, true},
		{"cert-manager", true, true, false, true},
		{"gateway-api", true, true, true, true},
		{"networking-bridge", true, true, true, true},
	} {
		c := cat.Components[tc.name]
		got := []bool{c.SupportsArch(releases.X86_64), c.SupportsArch(releases.AArch64), c.SupportsRelease(byStream["4.18"]), c.SupportsRelease(byStream["5.0"])}
		want := []bool{tc.x86, tc.arm, tc.r418, tc.r50}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s supports [x86_64 aarch64 4.18 5.0] = %v, want %v", tc.name, got, want)
		}
	}
	// No arches listed means every arch.
	anyArch := &components.Component{Name: "x"}
	if !anyArch.SupportsArch(releases.AArch64) || !anyArch.SupportsArch(releases.X86_64) {
		t.Errorf("a component without arches must support every arch")
	}
}

// Every image key of every embedded release file belongs to exactly one
// component: the catalog's claims partition the release.
func TestDefaultClaimsPartitionReleases(t *testing.T) {
	cat, err := components.Default()
	if err != nil {
		t.Fatal(err)
	}
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rels {
		for _, f := range r.Files() {
			for _, im := range f.Images {
				var owners []string
				for _, n := range cat.ComponentNames() {
					c := cat.Components[n]
					if c.Images.File != f.Component {
						continue
					}
					for _, k := range c.Images.Keys {
						if k == im.Key {
							owners = append(owners, n)
						}
					}
				}
				sort.Strings(owners)
				if len(owners) != 1 {
					t.Errorf("%s %s key %q is claimed by %v, want exactly one component", r, f.Name, im.Key, owners)
				}
			}
		}
	}
}
