package components_test

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

func TestDefault(t *testing.T) {
	cat, err := components.Default()
	if err != nil {
		t.Fatalf("Default() = %v", err)
	}
	// Apply order: order prefix, then name.
	wantOrder := []string{
		"core", "olm", "gateway-api", "low-latency", "multus", "networking-ovnk", "observability", "kindnet",
		"topolvm", "storage-hostpath", "storage-lvms", "snapshot-controller", "gitops", "ai-model-serving", "cert-manager", "sriov",
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
		capability, def, microshiftIO string
		providers                     []string
	}{
		{"cni", "networking-ovnk", "kindnet", []string{"kindnet", "networking-ovnk"}},
		{"csi", "storage-lvms", "topolvm", []string{"storage-hostpath", "storage-lvms", "topolvm"}},
	} {
		c := cat.Capabilities[tc.capability]
		if c == nil || c.Default != tc.def {
			t.Errorf("capability %s = %+v, want default %s", tc.capability, c, tc.def)
		}
		if got := cat.Providers(tc.capability); !reflect.DeepEqual(got, tc.providers) {
			t.Errorf("Providers(%s) = %v, want %v", tc.capability, got, tc.providers)
		}
		// microshift-io's build has its own default provider.
		if own := cat.Components[tc.microshiftIO]; own == nil || !slices.Equal(own.DefaultFor, []string{tc.capability}) || !slices.Equal(own.Builds, []string{"microshift-io"}) {
			t.Errorf("%s is not microshift-io's default %s provider: %+v", tc.microshiftIO, tc.capability, own)
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
		name     string
		order    int
		arches   []releases.Arch
		release  string
		requires []string
		variants int
	}{
		{"core", 0, both, ">=4.14", nil, 0},
		{"olm", 1, both, ">=4.15", []string{"core"}, 0},
		{"gateway-api", 2, both, ">=4.18", []string{"core"}, 0},
		{"low-latency", 3, both, ">=4.17", []string{"core"}, 0},
		// Upstream's Multus DaemonSet waits for OVN-K's CNI config.
		{"multus", 4, both, ">=4.16", []string{"core", "networking-ovnk"}, 0},
		{"networking-ovnk", 5, both, ">=4.14", []string{"core"}, 2},
		{"observability", 6, both, ">=4.19", []string{"core"}, 0},
		{"storage-hostpath", 9, both, ">=4.17", []string{"core"}, 0},
		{"gitops", 20, both, ">=4.21", []string{"core"}, 2},
		{"storage-lvms", 10, both, ">=4.14", []string{"core"}, 2},
		{"snapshot-controller", 11, both, ">=4.14", []string{"csi"}, 3},
		{"ai-model-serving", 50, []releases.Arch{releases.X86_64}, ">=4.19", []string{"core"}, 0},
		{"cert-manager", 60, both, ">=4.20", []string{"core"}, 2},
		{"sriov", 70, both, ">=4.21", []string{"core", "multus"}, 0},
		{"metrics-server", 80, both, ">=5.0", []string{"core"}, 0},
		{"kube-state-metrics", 81, both, ">=5.0", []string{"core"}, 0},
		{"node-exporter", 82, both, ">=5.0", []string{"core"}, 0},
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
			if len(c.Variants) != tc.variants {
				t.Errorf("%d variants, want %d", len(c.Variants), tc.variants)
			}
			if want := "embedded catalog: components/" + tc.name + "/component.toml"; c.Source != want || c.Dir != "" || c.FS == nil {
				t.Errorf("source %q dir %q FS %v, want %q, no dir, an FS", c.Source, c.Dir, c.FS, want)
			}
		})
	}
}

// What each component is on a given release: the [[variant]] for it
// applied. This is where MicroShift's changes between releases show: image
// keys, RPM names, config it needs, and what the release always deploys.
func TestDefaultForRelease(t *testing.T) {
	cat, err := components.Default()
	if err != nil {
		t.Fatal(err)
	}
	m := func(section, key string, v any) map[string]any {
		return map[string]any{section: map[string]any{key: v}}
	}
	for _, tc := range []struct {
		release, name string
		file          string
		keys          []string
		packages      []string
		selected      map[string]any
		omitted       map[string]any
		always        bool
	}{
		{"4.14.0", "networking-ovnk", "", []string{"ovn-kubernetes-microshift"}, nil, nil, nil, true},
		{"4.17.0", "networking-ovnk", "", []string{"ovn-kubernetes-microshift"}, nil, nil, nil, true},
		{"4.18.0", "networking-ovnk", "", []string{"ovn-kubernetes-microshift"}, nil, nil, m("network", "cniPlugin", "none"), false},
		{"4.16.0", "storage-lvms", "", []string{"topolvm_csi", "topolvm_csi_provisioner", "topolvm_csi_resizer", "topolvm_csi_livenessprobe", "topolvm_csi_registrar", "csi-external-snapshotter", "openssl"}, []string{"lvm2"}, nil, nil, true},
		{"4.17.0", "storage-lvms", "", []string{"lvms_operator"}, []string{"lvm2"}, nil, m("storage", "driver", "none"), false},
		{"4.16.0", "snapshot-controller", "", []string{"csi-snapshot-controller", "csi-snapshot-validation-webhook"}, nil, nil, nil, true},
		{"4.17.0", "snapshot-controller", "", []string{"csi-snapshot-controller", "csi-snapshot-validation-webhook"}, nil, nil, m("storage", "optionalCsiComponents", []any{"none"}), false},
		{"5.0.0", "snapshot-controller", "", []string{"csi-snapshot-controller"}, nil, nil, m("storage", "optionalCsiComponents", []any{"none"}), false},
		{"4.21.0", "cert-manager", "cert-manager", []string{"cert-manager-operator", "cert-manager-istiocsr", "cert-manager-acmesolver", "cert-manager-webhook", "cert-manager-ca-injector", "cert-manager-controller"}, []string{"microshift-cert-manager", "microshift-cert-manager-release-info"}, nil, nil, false},
		{"5.0.0", "cert-manager", "cert-manager", []string{"cert-manager-operator", "cert-manager-istiocsr", "cert-manager-trust-manager", "cert-manager-acmesolver", "cert-manager-webhook", "cert-manager-ca-injector", "cert-manager-controller"}, []string{"microshift-cert-manager", "microshift-cert-manager-release-info"}, nil, nil, false},
		// The RPM enables Multus itself; the plan writes nothing for it.
		{"5.0.0", "multus", "multus", []string{"multus-cni-microshift", "containernetworking-plugins-microshift"}, []string{"microshift-multus", "microshift-multus-release-info"}, nil, nil, false},
		{"5.0.0", "kube-state-metrics", "kube-state-metrics", []string{"kube_state_metrics"}, []string{"microshift-metrics-kube-state", "microshift-metrics-kube-state-release-info"}, nil, nil, false},
		{"5.0.0", "node-exporter", "node-exporter", []string{"node_exporter"}, []string{"microshift-metrics-node-exporter", "microshift-metrics-node-exporter-release-info"}, nil, nil, false},
		{"5.0.0", "core", "", []string{"cli", "coredns", "haproxy-router", "kube-rbac-proxy", "pod", "service-ca-operator"}, []string{"microshift", "microshift-selinux", "microshift-networking", "microshift-greenboot", "microshift-release-info"}, nil, nil, false},
		{"4.19.0", "low-latency", "", nil, []string{"microshift-low-latency"}, nil, nil, false},
		{"4.19.0", "observability", "", nil, []string{"microshift-observability"}, nil, nil, false},
	} {
		t.Run(tc.release+"/"+tc.name, func(t *testing.T) {
			c := cat.ForRelease(semver.MustParse(tc.release)).Components[tc.name]
			if c.Images.File != tc.file || !reflect.DeepEqual(c.Images.Keys, tc.keys) {
				t.Errorf("images = %q %q, want %q %q", c.Images.File, c.Images.Keys, tc.file, tc.keys)
			}
			if !reflect.DeepEqual(c.Packages, tc.packages) {
				t.Errorf("packages = %q, want %q", c.Packages, tc.packages)
			}
			if !reflect.DeepEqual(c.Config.Selected, tc.selected) || !reflect.DeepEqual(c.Config.Omitted, tc.omitted) {
				t.Errorf("config selected %#v omitted %#v, want %#v %#v", c.Config.Selected, c.Config.Omitted, tc.selected, tc.omitted)
			}
			if (c.AlwaysDeployed != "") != tc.always {
				t.Errorf("AlwaysDeployed = %q, want set: %v", c.AlwaysDeployed, tc.always)
			}
		})
	}
	core := cat.Components["core"]
	if !reflect.DeepEqual(core.Firewall.TrustedSources, []string{"cluster-network", "169.254.169.1"}) {
		t.Errorf("core trusted sources = %v", core.Firewall.TrustedSources)
	}
	if !reflect.DeepEqual(core.Services.Enabled, []string{"microshift"}) {
		t.Errorf("core services = %v", core.Services.Enabled)
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
	if len(rels) != 11 {
		t.Fatalf("%d embedded releases, want 4.14 to 4.22, 5.0 and 5.1", len(rels))
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
	for _, tc := range []struct {
		name     string
		x86, arm bool
		// The releases it is available for, of the embedded ones.
		streams []string
	}{
		{"core", true, true, []string{"4.14", "4.15", "4.16", "4.17", "4.18", "4.19", "4.20", "4.21", "4.22", "5.0", "5.1"}},
		{"ai-model-serving", true, false, []string{"4.19", "4.20", "4.21", "4.22", "5.0", "5.1"}},
		{"cert-manager", true, true, []string{"4.20", "4.21", "4.22", "5.0", "5.1"}},
		{"gateway-api", true, true, []string{"4.18", "4.19", "4.20", "4.21", "4.22", "5.0", "5.1"}},
		{"multus", true, true, []string{"4.16", "4.17", "4.18", "4.19", "4.20", "4.21", "4.22", "5.0", "5.1"}},
		{"sriov", true, true, []string{"4.21", "4.22", "5.0", "5.1"}},
		{"low-latency", true, true, []string{"4.17", "4.18", "4.19", "4.20", "4.21", "4.22", "5.0", "5.1"}},
		{"node-exporter", true, true, []string{"5.0", "5.1"}},
		{"gitops", true, true, []string{"4.21", "4.22", "5.0", "5.1"}},
	} {
		c := cat.Components[tc.name]
		if got := []bool{c.SupportsArch(releases.X86_64), c.SupportsArch(releases.AArch64)}; !reflect.DeepEqual(got, []bool{tc.x86, tc.arm}) {
			t.Errorf("%s supports [x86_64 aarch64] = %v, want %v", tc.name, got, []bool{tc.x86, tc.arm})
		}
		var got []string
		for _, r := range rels {
			if c.SupportsRelease(r) {
				got = append([]string{r.Stream()}, got...)
			}
		}
		if !reflect.DeepEqual(got, tc.streams) {
			t.Errorf("%s is available for %v, want %v", tc.name, got, tc.streams)
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
		view := cat.ForRelease(r.Version)
		for _, f := range r.Files() {
			for _, im := range f.Images {
				var owners []string
				for _, n := range view.ComponentNames() {
					c := view.Components[n]
					if c.Images.File != f.Component || !c.SupportsRelease(r) {
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

// A catalog's digest for a build of MicroShift leaves out the components
// of other builds: the embedded catalog's Red Hat digest is its Digest,
// microshift-io's differs, and changing a component for microshift-io only
// changes microshift-io's.
func TestDigestForBuild(t *testing.T) {
	cat, err := components.Default()
	if err != nil {
		t.Fatal(err)
	}
	if cat.DigestFor("redhat") != cat.Digest || cat.DigestFor("microshift-io") == cat.Digest || len(cat.DigestFor("microshift-io")) != 64 {
		t.Errorf("DigestFor: redhat %s, microshift-io %s, Digest %s", cat.DigestFor("redhat"), cat.DigestFor("microshift-io"), cat.Digest)
	}
	overlay := func(description string) *components.Catalog {
		dir := t.TempDir()
		testutil.WriteFile(t, filepath.Join(dir, "components", "extra", "component.toml"), []byte(`name = "extra"
description = "`+description+`"
order = 90
builds = ["microshift-io"]
requires = ["core"]
`))
		c, err := components.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := overlay("one"), overlay("two")
	if a.DigestFor("redhat") != b.DigestFor("redhat") || a.DigestFor("microshift-io") == b.DigestFor("microshift-io") {
		t.Errorf("a microshift-io component changed: redhat %s -> %s, microshift-io %s -> %s", a.DigestFor("redhat"), b.DigestFor("redhat"), a.DigestFor("microshift-io"), b.DigestFor("microshift-io"))
	}
}

// kindnet's greenboot check reads as bash and to shellcheck, and every
// function of MicroShift's greenboot library it calls is in the library of
// each release it is for (release-4.19 and later of ../shared/reference).
func TestKindnetGreenbootCheck(t *testing.T) {
	cat, err := components.Default()
	if err != nil {
		t.Fatal(err)
	}
	c := cat.Components["kindnet"]
	if c == nil || len(c.Files) != 1 || !strings.HasPrefix(c.Files[0].Path, "/etc/greenboot/check/required.d/") || c.Files[0].Mode != "0755" {
		t.Fatalf("kindnet's files: %+v", c)
	}
	script := filepath.Join(t.TempDir(), "check.sh")
	testutil.WriteFile(t, script, []byte(c.Files[0].Content))
	for _, args := range [][]string{{testutil.NeedTool(t, "bash", "bash"), "-n", script}, {testutil.NeedTool(t, "shellcheck", "shellcheck"), "-s", "bash", script}} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", filepath.Base(args[0]), err, out)
		}
	}
	for _, fn := range []string{"exit_if_fail_marker_exists", "print_boot_status", "get_wait_timeout", "create_fail_marker_and_exit"} {
		if !strings.Contains(c.Files[0].Content, fn) {
			t.Errorf("the check does not call %s", fn)
		}
		for _, branch := range []string{"release-4.19", "release-4.20", "release-4.21", "release-4.22", "main"} {
			lib := string(testutil.ReadFile(t, testutil.Shared(t, "reference", "microshift-greenboot", branch, "functions.sh")))
			if !strings.Contains(lib, "function "+fn+"()") && !strings.Contains(lib, fn+"() {") {
				t.Errorf("%s's greenboot functions have no %s", branch, fn)
			}
		}
	}
}
