package compose_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// catalogSource says which catalog a resolver case runs against.
type catalogSource struct {
	dir     string // under testdata/catalogs; "" = the embedded catalog
	overlay bool   // components.Load (overlay on the embedded) rather than LoadOnly
}

var overlayCatalog = catalogSource{dir: "resolver-overlay", overlay: true}

func (s catalogSource) load(t *testing.T) (*components.Catalog, error) {
	t.Helper()
	if s.dir == "" {
		return components.Default()
	}
	dir := testutil.TestdataDir(t, "catalogs", s.dir)
	if s.overlay {
		return components.Load(dir)
	}
	return components.LoadOnly(dir)
}

func profileReason(p string) plan.Reason { return plan.Reason{Kind: plan.ReasonProfile, Profile: p} }

var withReason = plan.Reason{Kind: plan.ReasonWith}

func requiredBy(n string) plan.Reason { return plan.Reason{Kind: plan.ReasonRequired, By: n} }

func providerFor(capability, by string) plan.Reason {
	return plan.Reason{Kind: plan.ReasonCapability, Capability: capability, By: by}
}

func TestResolve(t *testing.T) {
	catalogs := testutil.TestdataDir(t, "catalogs")
	for _, tc := range []struct {
		name    string
		catalog catalogSource
		stream  string        // "" = 5.0
		arch    releases.Arch // "" = x86_64
		req     compose.Request
		config  string // the user's config.yaml, "" for none

		want        []string                 // components in apply order
		wantReasons map[string][]plan.Reason // for the components named
		wantCaps    map[string]string        // nil = not checked
		wantErr     string                   // exact message; "" = success
		wantErrIs   error
		check       func(t *testing.T, p *plan.Plan)
	}{
		// The four profiles of the pluggable-components proposal.
		{
			name:        "minimal is core only",
			req:         compose.Request{Profile: "minimal"},
			want:        []string{"core"},
			wantReasons: map[string][]plan.Reason{"core": {profileReason("minimal")}},
			wantCaps:    map[string]string{},
		},
		{
			name:     "networking-only adds OVN-K",
			req:      compose.Request{Profile: "networking-only"},
			want:     []string{"core", "networking-ovnk"},
			wantCaps: map[string]string{"cni": "networking-ovnk"},
		},
		{
			name:     "storage-only adds LVMS",
			req:      compose.Request{Profile: "storage-only"},
			want:     []string{"core", "storage-lvms"},
			wantCaps: map[string]string{"csi": "storage-lvms"},
		},
		{
			name: "full",
			req:  compose.Request{Profile: "full"},
			want: []string{"core", "networking-ovnk", "storage-lvms", "snapshot-controller"},
			wantReasons: map[string][]plan.Reason{
				"core":                {profileReason("full"), requiredBy("networking-ovnk"), requiredBy("storage-lvms")},
				"snapshot-controller": {profileReason("full")},
			},
			wantCaps: map[string]string{"cni": "networking-ovnk", "csi": "storage-lvms"},
		},
		{
			name:   "full on 4.18 aarch64",
			stream: "4.18", arch: releases.AArch64,
			req:  compose.Request{Profile: "full"},
			want: []string{"core", "networking-ovnk", "storage-lvms", "snapshot-controller"},
		},
		// --with and --without.
		{
			name:        "--with adds a component",
			req:         compose.Request{Profile: "minimal", With: []string{"olm"}},
			want:        []string{"core", "olm"},
			wantReasons: map[string][]plan.Reason{"olm": {withReason}},
		},
		{
			name: "--with a component already in the profile records both reasons",
			req:  compose.Request{Profile: "full", With: []string{"storage-lvms", "storage-lvms"}},
			want: []string{"core", "networking-ovnk", "storage-lvms", "snapshot-controller"},
			wantReasons: map[string][]plan.Reason{
				"storage-lvms": {profileReason("full"), withReason},
			},
			check: func(t *testing.T, p *plan.Plan) {
				if want := []string{"storage-lvms"}; !reflect.DeepEqual(p.With, want) {
					t.Errorf("plan.With = %q, want %q", p.With, want)
				}
			},
		},
		{
			name: "--without an optional component of the profile",
			req:  compose.Request{Profile: "full", Without: []string{"snapshot-controller"}},
			want: []string{"core", "networking-ovnk", "storage-lvms"},
			check: func(t *testing.T, p *plan.Plan) {
				got := p.Config["storage"].(map[string]any)["optionalCsiComponents"]
				if want := []any{"none"}; !reflect.DeepEqual(got, want) {
					t.Errorf("storage.optionalCsiComponents = %v, want %v", got, want)
				}
			},
		},
		{
			name: "--without a component that is not selected changes nothing",
			req:  compose.Request{Profile: "minimal", Without: []string{"olm"}},
			want: []string{"core"},
		},
		// Capabilities: default providers pulled in, and a chosen provider kept.
		{
			name: "--with multus pulls in OVN-K, which Multus runs on",
			req:  compose.Request{Profile: "minimal", With: []string{"multus"}},
			want: []string{"core", "multus", "networking-ovnk"},
			wantReasons: map[string][]plan.Reason{
				"multus":          {withReason},
				"networking-ovnk": {requiredBy("multus")},
			},
			wantCaps: map[string]string{"cni": "networking-ovnk"},
			check: func(t *testing.T, p *plan.Plan) {
				// The multus RPM's own drop-in enables it: the plan writes
				// nothing under network.
				if net, ok := p.Config["network"]; ok {
					t.Errorf("config network = %v, want none", net)
				}
				note := "network.multus.status is \"Enabled\", set by the microshift-multus RPM (/etc/microshift/config.d/00-enable-multus.yaml); the plan does not write it"
				if !slices.Contains(p.Notes, note) {
					t.Errorf("notes %q lack %q", p.Notes, note)
				}
			},
		},
		{
			name:        "a cni provider brought with --catalog replaces OVN-K",
			catalog:     overlayCatalog,
			req:         compose.Request{Profile: "storage-only", With: []string{"cni-alt"}},
			want:        []string{"core", "cni-alt", "storage-lvms"},
			wantReasons: map[string][]plan.Reason{"cni-alt": {withReason}},
			wantCaps:    map[string]string{"cni": "cni-alt", "csi": "storage-lvms"},
			check: func(t *testing.T, p *plan.Plan) {
				if got := p.Config["network"].(map[string]any)["cniPlugin"]; got != "none" {
					t.Errorf("network.cniPlugin = %v, want none (the user's CNI, not one MicroShift deploys)", got)
				}
				if w := assembletest.DeviceWarnings(p); len(w) != 0 {
					t.Errorf("warnings = %q, want none: the plan has a CNI", w)
				}
			},
		},
		{
			name:    "Multus needs OVN-K, not just any CNI",
			catalog: overlayCatalog,
			req:     compose.Request{Profile: "minimal", With: []string{"multus", "cni-alt"}},
			wantErr: "cni-alt and networking-ovnk both provide cni and a plan may have only one (cni-alt: --with; networking-ovnk: required by multus <- --with); leave one out with --without",
		},
		{
			name: "--with snapshot-controller pulls in the default csi provider",
			req:  compose.Request{Profile: "minimal", With: []string{"snapshot-controller"}},
			want: []string{"core", "storage-lvms", "snapshot-controller"},
			wantReasons: map[string][]plan.Reason{
				"storage-lvms": {providerFor("csi", "snapshot-controller")},
			},
		},
		{
			name: "--with sriov pulls in multus, which pulls in OVN-K",
			req:  compose.Request{Profile: "minimal", With: []string{"sriov"}},
			want: []string{"core", "multus", "networking-ovnk", "sriov"},
			wantReasons: map[string][]plan.Reason{
				"sriov":           {withReason},
				"multus":          {requiredBy("sriov")},
				"networking-ovnk": {requiredBy("multus")},
			},
		},
		{
			name:    "a fixture capability's default provider",
			catalog: overlayCatalog,
			req:     compose.Request{Profile: "edge-ai"},
			want:    []string{"core", "gpu-nvidia", "inference"},
			wantReasons: map[string][]plan.Reason{
				"inference":  {profileReason("edge-ai")},
				"gpu-nvidia": {providerFor("gpu", "inference")},
			},
			wantCaps: map[string]string{"gpu": "gpu-nvidia"},
		},
		{
			name:     "a fixture capability's other provider, chosen with --with",
			catalog:  overlayCatalog,
			req:      compose.Request{Profile: "edge-ai", With: []string{"gpu-amd"}},
			want:     []string{"core", "gpu-amd", "inference"},
			wantCaps: map[string]string{"gpu": "gpu-amd"},
		},
		// Apply order: order prefix first, whatever the names or the order given.
		{
			name: "apply order follows order prefixes",
			req:  compose.Request{Profile: "full", With: []string{"sriov", "olm", "node-exporter", "gateway-api", "metrics-server"}},
			want: []string{
				"core",                // 000
				"olm",                 // 001
				"gateway-api",         // 002
				"multus",              // 004
				"networking-ovnk",     // 005
				"storage-lvms",        // 010
				"snapshot-controller", // 011
				"sriov",               // 070
				"metrics-server",      // 080
				"node-exporter",       // 082
			},
		},
		// Conflicts.
		{
			name:    "explicit conflict: the hostpath CSI driver with LVMS",
			req:     compose.Request{Profile: "full", With: []string{"storage-hostpath"}},
			wantErr: "storage-hostpath conflicts with storage-lvms (storage-hostpath: --with; storage-lvms: profile full); leave one out with --without",
		},
		{
			name:    "explicit conflict between two --with components",
			catalog: overlayCatalog,
			req:     compose.Request{Profile: "minimal", With: []string{"edge-agent", "olm"}},
			wantErr: "edge-agent conflicts with olm (edge-agent: --with; olm: --with); leave one out with --without",
		},
		{
			name:    "explicit conflict with a capability hits its provider",
			catalog: overlayCatalog,
			req:     compose.Request{Profile: "full", With: []string{"net-probe"}},
			wantErr: "net-probe conflicts with storage-lvms (net-probe: --with; storage-lvms: profile full); leave one out with --without",
		},
		{
			name:    "conflict via capability: two cni providers",
			catalog: overlayCatalog,
			req:     compose.Request{Profile: "networking-only", With: []string{"cni-alt"}},
			wantErr: "cni-alt and networking-ovnk both provide cni and a plan may have only one (cni-alt: --with; networking-ovnk: profile networking-only); leave one out with --without",
		},
		{
			name:    "conflict via capability: a pulled-in default and a chosen provider",
			catalog: overlayCatalog,
			req:     compose.Request{Profile: "edge-ai", With: []string{"gpu-amd", "gpu-nvidia"}},
			wantErr: "gpu-amd and gpu-nvidia both provide gpu and a plan may have only one (gpu-amd: --with; gpu-nvidia: --with); leave one out with --without",
		},
		// Arch and release availability.
		{
			name:    "unavailable arch: ai-model-serving on aarch64",
			arch:    releases.AArch64,
			req:     compose.Request{Profile: "minimal", With: []string{"ai-model-serving"}},
			wantErr: `component "ai-model-serving" does not support aarch64, only x86_64 (ai-model-serving: --with)`,
		},
		{
			name:    "unavailable arch, through a requirement, names the chain",
			catalog: overlayCatalog,
			arch:    releases.AArch64,
			req:     compose.Request{Profile: "minimal", With: []string{"model-gateway"}},
			wantErr: `component "ai-model-serving" does not support aarch64, only x86_64 (ai-model-serving: required by model-gateway <- --with)`,
		},
		{
			name:    "release too old: cert-manager on 4.18",
			stream:  "4.18",
			req:     compose.Request{Profile: "full", With: []string{"cert-manager"}},
			wantErr: `component "cert-manager" is not available for release 4.18: it needs release >=4.20 (cert-manager: --with)`,
		},
		{
			name:    "release too old, through a requirement, names the chain",
			catalog: overlayCatalog,
			stream:  "4.18",
			req:     compose.Request{Profile: "full", With: []string{"model-gateway"}},
			wantErr: `component "ai-model-serving" is not available for release 4.18: it needs release >=4.19 (ai-model-serving: required by model-gateway <- --with)`,
		},
		// --without of something required.
		{
			name:    "--without core from full",
			req:     compose.Request{Profile: "full", Without: []string{"core"}},
			wantErr: "--without core: networking-ovnk requires it (networking-ovnk: profile full)",
		},
		{
			name:    "--without multus with sriov",
			req:     compose.Request{Profile: "minimal", With: []string{"sriov"}, Without: []string{"multus"}},
			wantErr: "--without multus: sriov requires it (sriov: --with)",
		},
		{
			name:    "--without the default cni provider multus needs",
			req:     compose.Request{Profile: "minimal", With: []string{"multus"}, Without: []string{"networking-ovnk"}},
			wantErr: "--without networking-ovnk: multus requires it (multus: --with)",
		},
		{
			name:    "--without the default cni provider names the chain from sriov",
			req:     compose.Request{Profile: "minimal", With: []string{"sriov"}, Without: []string{"networking-ovnk"}},
			wantErr: "--without networking-ovnk: multus requires it (multus: required by sriov <- --with)",
		},
		{
			name:    "--without the default csi provider the snapshot controller needs",
			req:     compose.Request{Profile: "full", Without: []string{"storage-lvms"}},
			wantErr: "--without storage-lvms: snapshot-controller requires a csi provider and storage-lvms is its default (snapshot-controller: profile full); select another provider with --with storage-hostpath",
		},
		{
			name:    "--without a fixture default provider suggests the other",
			catalog: overlayCatalog,
			req:     compose.Request{Profile: "edge-ai", Without: []string{"gpu-nvidia"}},
			wantErr: "--without gpu-nvidia: inference requires a gpu provider and gpu-nvidia is its default (inference: profile edge-ai); select another provider with --with gpu-amd",
		},
		{
			name:    "--with and --without the same component",
			req:     compose.Request{Profile: "minimal", With: []string{"olm"}, Without: []string{"olm"}},
			wantErr: `component "olm" is given to both --with and --without`,
		},
		// Unknown names.
		{
			name:    "unknown profile with a suggestion",
			req:     compose.Request{Profile: "ful"},
			wantErr: `unknown profile "ful"; did you mean "full"?`,
		},
		{
			name:    "unknown profile without a suggestion",
			req:     compose.Request{Profile: "everything"},
			wantErr: `unknown profile "everything" (have full, minimal, networking-only, storage-only)`,
		},
		{
			name:    "no profile",
			req:     compose.Request{},
			wantErr: "no profile given (have full, minimal, networking-only, storage-only)",
		},
		{
			name:    "unknown --with component with a suggestion",
			req:     compose.Request{Profile: "minimal", With: []string{"mutlus"}},
			wantErr: `--with: unknown component "mutlus"; did you mean "multus"?`,
		},
		{
			name:    "unknown --without component without a suggestion",
			req:     compose.Request{Profile: "minimal", Without: []string{"kubevirt"}},
			wantErr: `--without: unknown component "kubevirt" (see 'microshift-compose components')`,
		},
		{
			name:    "--with a capability name",
			req:     compose.Request{Profile: "minimal", With: []string{"cni"}},
			wantErr: `--with cni: "cni" is a capability; name a component that provides it (networking-ovnk)`,
		},
		// Cycles are refused when the catalog loads.
		{
			name:    "requires cycle through a capability",
			catalog: catalogSource{dir: "resolver-cycle"},
			req:     compose.Request{Profile: "loop"},
			wantErr: filepath.Join(catalogs, "resolver-cycle", "components", "alpha", "component.toml") + ": dependency cycle: alpha -> beta -> gamma -> alpha",
		},
		{
			name:    "requires cycle introduced by an overlay",
			catalog: catalogSource{dir: "resolver-cycle-overlay", overlay: true},
			req:     compose.Request{Profile: "minimal"},
			wantErr: filepath.Join(catalogs, "resolver-cycle-overlay", "components", "core", "component.toml") + ": dependency cycle: core -> multus -> core",
		},
		{
			name:    "a required capability nothing provides",
			catalog: catalogSource{dir: "resolver-no-provider", overlay: true},
			req:     compose.Request{Profile: "minimal", With: []string{"needs-tpu"}},
			wantErr: filepath.Join(catalogs, "resolver-no-provider", "components", "needs-tpu", "component.toml") + `: requires capability "tpu", which no component in the catalog provides`,
		},
		// Unpinned images.
		{
			name:      "tag-only images are refused",
			req:       compose.Request{Profile: "minimal", With: []string{"ai-model-serving"}},
			wantErrIs: compose.ErrUnpinned,
			wantErr: `component "ai-model-serving" image "ray-tls-generator-image" (release-ai-model-serving-x86_64.json): ` +
				`image is not pinned by digest: registry.redhat.io/ubi9/ubi-minimal:latest (and 15 more tag-only images); ` +
				`pin them in the release file, or pass --allow-unpinned to embed them by tag`,
		},
		{
			name: "--allow-unpinned turns tag-only images into warnings",
			req:  compose.Request{Profile: "networking-only", With: []string{"ai-model-serving"}, AllowUnpinned: true},
			want: []string{"core", "networking-ovnk", "ai-model-serving"},
			check: func(t *testing.T, p *plan.Plan) {
				var unpinned []string
				for _, im := range p.Images {
					if !im.Pinned {
						unpinned = append(unpinned, im.Ref)
					}
				}
				// Counted independently in the upstream file: 16 of its 20 refs are tags.
				want := assembletest.UpstreamTagOnly(t, "release-ai-model-serving-x86_64.json")
				if !reflect.DeepEqual(unpinned, want) || len(assembletest.DeviceWarnings(p)) != len(want) {
					t.Fatalf("unpinned images %q (%d warnings), want %q", unpinned, len(assembletest.DeviceWarnings(p)), want)
				}
				first := `component "ai-model-serving" image "ray-tls-generator-image" (release-ai-model-serving-x86_64.json) is not pinned by digest: ` +
					`registry.redhat.io/ubi9/ubi-minimal:latest (allowed by --allow-unpinned; the device may not boot offline reproducibly)`
				if w := assembletest.DeviceWarnings(p); w[0] != first {
					t.Errorf("Warnings[0] = %q, want %q", w[0], first)
				}
			},
		},
		// The user's config.yaml.
		{
			name:   "the user's cluster network feeds the trusted zone",
			req:    compose.Request{Profile: "full"},
			config: "network:\n  clusterNetwork: [10.100.0.0/16, fd01::/48]\n  serviceNetwork: [10.101.0.0/16, fd02::/112]\n  serviceNodePortRange: 31000-31999\n",
			want:   []string{"core", "networking-ovnk", "storage-lvms", "snapshot-controller"},
			check: func(t *testing.T, p *plan.Plan) {
				if want := []string{"10.100.0.0/16", "169.254.169.1", "fd01::/48"}; !reflect.DeepEqual(p.Firewall.TrustedSources, want) {
					t.Errorf("trusted sources = %q, want %q", p.Firewall.TrustedSources, want)
				}
				if want := []string{"80:tcp", "443:tcp", "5353:udp", "6443:tcp", "31000-31999:tcp", "31000-31999:udp"}; !reflect.DeepEqual(p.Firewall.Ports, want) {
					t.Errorf("ports = %q, want %q", p.Firewall.Ports, want)
				}
				var src string
				for _, s := range p.ConfigSources {
					if s.Path == "network.clusterNetwork" {
						src = s.Source
					}
				}
				if src != "user config.yaml" {
					t.Errorf("source of network.clusterNetwork = %q, want %q", src, "user config.yaml")
				}
			},
		},
		{
			name:    "the user's cniPlugin conflicts with the plan",
			req:     compose.Request{Profile: "minimal"},
			config:  "network:\n  cniPlugin: ovnk\n",
			wantErr: `/etc/microshift/config.yaml: network.cniPlugin is "ovnk" but the plan needs "none" (set by networking-ovnk left out); remove it from the file or change the selection`,
		},
		{
			name:    "the user's cluster network feeds a component's template",
			catalog: overlayCatalog,
			req:     compose.Request{Profile: "minimal", With: []string{"cni-alt"}},
			config:  "network:\n  clusterNetwork: [10.100.0.0/16]\n",
			want:    []string{"core", "cni-alt"},
			check: func(t *testing.T, p *plan.Plan) {
				f := p.File("/etc/cni/net.d/10-cni-alt.conflist")
				if f == nil || !strings.Contains(string(f.Data), `"subnet": "10.100.0.0/16"`) || f.Component != "cni-alt" {
					t.Errorf("cni-alt conflist %+v, want subnet 10.100.0.0/16", f)
				}
			},
		},
		{
			name:    "two components setting one config key differently",
			catalog: overlayCatalog,
			req:     compose.Request{Profile: "storage-only", With: []string{"csi-alt"}, Without: []string{"storage-lvms"}},
			wantErr: `config conflict at storage.optionalCsiComponents: snapshot-controller left out sets ["none"], csi-alt sets ["snapshot-controller"]`,
		},
		{
			name:   "the user's cniPlugin agreeing with the plan is kept once",
			req:    compose.Request{Profile: "storage-only"},
			config: "network:\n  cniPlugin: none\n",
			want:   []string{"core", "storage-lvms"},
			check: func(t *testing.T, p *plan.Plan) {
				for _, s := range p.ConfigSources {
					if s.Path == "network.cniPlugin" && s.Source != "networking-ovnk left out" {
						t.Errorf("source of network.cniPlugin = %q, want networking-ovnk left out (the first to set it)", s.Source)
					}
				}
			},
		},
		// What a release can honour, from the release knowledge.
		{
			name:    "no CNI before 4.18",
			stream:  "4.17",
			req:     compose.Request{Profile: "storage-only"},
			wantErr: "profile storage-only leaves out networking-ovnk, which release 4.17 cannot honour: MicroShift before 4.18 always deploys OVN-Kubernetes (network.cniPlugin, which turns it off, exists from 4.18); select it (--with networking-ovnk) or use a newer --release",
		},
		{
			name:    "--without LVMS before 4.17",
			stream:  "4.16",
			req:     compose.Request{Profile: "full", Without: []string{"snapshot-controller"}},
			wantErr: "--without snapshot-controller, which release 4.16 cannot honour: MicroShift before 4.17 always deploys the CSI snapshot controller (storage.optionalCsiComponents, which turns it off, exists from 4.17); select it (--with snapshot-controller) or use a newer --release",
		},
		{
			name:   "4.17 turns storage off in config.yaml",
			stream: "4.17",
			req:    compose.Request{Profile: "networking-only"},
			want:   []string{"core", "networking-ovnk"},
			check: func(t *testing.T, p *plan.Plan) {
				if p.ConfigFile != "/etc/microshift/config.yaml" {
					t.Errorf("config file = %q, want /etc/microshift/config.yaml (4.17 reads no config.d)", p.ConfigFile)
				}
				want := map[string]any{"storage": map[string]any{"driver": "none", "optionalCsiComponents": []any{"none"}}}
				if !reflect.DeepEqual(p.Config, want) {
					t.Errorf("config = %v, want %v", p.Config, want)
				}
			},
		},
		{
			name:   "full on 4.14 writes no config",
			stream: "4.14",
			req:    compose.Request{Profile: "full"},
			want:   []string{"core", "networking-ovnk", "storage-lvms", "snapshot-controller"},
			check: func(t *testing.T, p *plan.Plan) {
				if len(p.Config) != 0 || p.ConfigFile != "" || len(p.Files) != 0 {
					t.Errorf("config %v in %q, files %v; want none", p.Config, p.ConfigFile, p.Files)
				}
			},
		},
		{
			name: "no CNI is a device-level warning",
			req:  compose.Request{Profile: "storage-only"},
			want: []string{"core", "storage-lvms"},
			check: func(t *testing.T, p *plan.Plan) {
				if w := assembletest.DeviceWarnings(p); len(w) != 1 || !strings.HasPrefix(w[0], "no CNI: ") || !strings.Contains(w[0], "greenboot marks the boot red") {
					t.Errorf("warnings = %q, want the no-CNI warning", w)
				}
			},
		},
		{
			// 4.18's greenboot check waits for OVN-K whatever the config
			// says: the device rolls back on every boot.
			name:      "no CNI on 4.18: refused, every boot is red",
			stream:    "4.18",
			req:       compose.Request{Profile: "minimal"},
			wantErr:   "release 4.18: the device never becomes healthy: no CNI: MicroShift deploys no pod network (network.cniPlugin: none), so DNS, the router and service-ca never become ready, and the 4.18 greenboot check always waits for OVN-Kubernetes pods: greenboot marks every boot red, even with a CNI of your own; add a cni provider (--with networking-ovnk), or pass --allow-red-boot to build a device that rolls back on every boot",
			wantErrIs: compose.ErrRedBoot,
		},
		{
			name:      "no CNI on 4.18 by --without: refused",
			stream:    "4.18",
			req:       compose.Request{Profile: "full", Without: []string{"networking-ovnk"}},
			wantErrIs: compose.ErrRedBoot,
		},
		{
			name:   "no CNI on 4.18 with --allow-red-boot: the warning says it was accepted",
			stream: "4.18",
			req:    compose.Request{Profile: "storage-only", AllowRedBoot: true},
			want:   []string{"core", "storage-lvms"},
			check: func(t *testing.T, p *plan.Plan) {
				if w := assembletest.DeviceWarnings(p); len(w) != 1 || !strings.Contains(w[0], "the 4.18 greenboot check always waits for OVN-Kubernetes pods") || !strings.HasSuffix(w[0], " (built anyway: --allow-red-boot)") {
					t.Errorf("warnings = %q, want the 4.18 no-CNI warning, accepted", w)
				}
			},
		},
		{
			name:   "--allow-red-boot with a CNI: nothing to accept",
			stream: "4.18",
			req:    compose.Request{Profile: "networking-only", AllowRedBoot: true},
			want:   []string{"core", "networking-ovnk"},
			check: func(t *testing.T, p *plan.Plan) {
				if w := assembletest.DeviceWarnings(p); len(w) != 0 {
					t.Errorf("warnings = %q, want none", w)
				}
			},
		},
		{
			name:    "the user enabling Multus without it",
			req:     compose.Request{Profile: "full"},
			config:  "network:\n  multus:\n    status: Enabled\n",
			wantErr: `/etc/microshift/config.yaml: network.multus.status: "Enabled" needs component multus, which the plan leaves out; add --with multus or drop the setting`,
		},
		{
			name:    "the user disabling Multus the multus RPM enables",
			req:     compose.Request{Profile: "full", With: []string{"multus"}},
			config:  "network:\n  multus:\n    status: Disabled\n",
			wantErr: `/etc/microshift/config.yaml: network.multus.status is "Disabled" but the plan needs "Enabled" (set by the microshift-multus RPM (/etc/microshift/config.d/00-enable-multus.yaml)); remove it from the file or change the selection`,
		},
		{
			name:    "the user's config is checked with the release's rules",
			stream:  "4.18",
			req:     compose.Request{Profile: "full"},
			config:  "telemetry:\n  status: Disabled\n",
			wantErr: `/etc/microshift/config.yaml: telemetry: MicroShift 4.18 has no such setting (it exists from MicroShift 4.19)`,
		},
		{
			name:    "a component asking for an RPM the release does not build",
			catalog: overlayCatalog,
			req:     compose.Request{Profile: "full", With: []string{"rpm-missing"}},
			wantErr: `component "rpm-missing" needs RPM microshift-foo, which MicroShift 5.0 does not build (rpm-missing: --with)`,
		},
		{
			name:    "a component setting a value the release rejects",
			catalog: overlayCatalog,
			req:     compose.Request{Profile: "full", With: []string{"config-rejected"}},
			wantErr: filepath.Join(catalogs, "resolver-overlay", "components", "config-rejected", "component.toml") + `: config.selected: network.multus.status: "Managed" is not one of "", "Enabled", "Disabled" (MicroShift 5.0)`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream, arch := tc.stream, tc.arch
			if stream == "" {
				stream = "5.0"
			}
			if arch == "" {
				arch = releases.X86_64
			}
			req := tc.req
			req.Arch = arch
			if tc.config != "" {
				cfg, err := microshiftconfig.Parse("/etc/microshift/config.yaml", []byte(tc.config))
				if err != nil {
					t.Fatalf("microshiftconfig.Parse() = %v", err)
				}
				req.Config = cfg
			}
			p, err := func() (*plan.Plan, error) {
				cat, err := tc.catalog.load(t)
				if err != nil {
					return nil, err
				}
				return compose.Resolve(context.Background(), cat, assembletest.Release(t, stream), req)
			}()
			if tc.wantErr != "" || tc.wantErrIs != nil {
				if err == nil {
					t.Fatalf("Resolve(%+v) = %v, want error %q", tc.req, p.ComponentNames(), tc.wantErr)
				}
				if tc.wantErr != "" && err.Error() != tc.wantErr {
					t.Errorf("Resolve(%+v) error\n got: %s\nwant: %s", tc.req, err, tc.wantErr)
				}
				if tc.wantErrIs != nil && !errors.Is(err, tc.wantErrIs) {
					t.Errorf("Resolve(%+v) = %v, want errors.Is(err, %v)", tc.req, err, tc.wantErrIs)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("Resolve(%+v) error spans lines: %q", tc.req, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%+v) = %v", tc.req, err)
			}
			if got := p.ComponentNames(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Resolve(%+v) = %q, want %q", tc.req, got, tc.want)
			}
			for n, want := range tc.wantReasons {
				c := p.Component(n)
				if c == nil {
					t.Errorf("Resolve(%+v): %s is not in the plan", tc.req, n)
					continue
				}
				if !reflect.DeepEqual(c.Reasons, want) {
					t.Errorf("Resolve(%+v): reasons for %s = %+v, want %+v", tc.req, n, c.Reasons, want)
				}
			}
			if tc.wantCaps != nil && !reflect.DeepEqual(p.Capabilities, tc.wantCaps) {
				t.Errorf("Resolve(%+v): capabilities = %v, want %v", tc.req, p.Capabilities, tc.wantCaps)
			}
			checkPlanInvariants(t, p)
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

// checkPlanInvariants holds for every plan: every component has a reason,
// components are in apply order, images sorted and unique with at least one
// use, and every capability has exactly one selected provider.
func checkPlanInvariants(t *testing.T, p *plan.Plan) {
	t.Helper()
	for i, c := range p.Components {
		if len(c.Reasons) == 0 {
			t.Errorf("component %s has no reason", c.Name)
		}
		if i > 0 && p.Components[i-1].Order >= c.Order {
			t.Errorf("components %s (%03d) and %s (%03d) are out of apply order", p.Components[i-1].Name, p.Components[i-1].Order, c.Name, c.Order)
		}
	}
	for i, im := range p.Images {
		if i > 0 && p.Images[i-1].Ref >= im.Ref {
			t.Errorf("images %s and %s are not sorted and unique", p.Images[i-1].Ref, im.Ref)
		}
		if len(im.Uses) == 0 {
			t.Errorf("image %s has no use", im.Ref)
		}
		for _, u := range im.Uses {
			if p.Component(u.Component) == nil {
				t.Errorf("image %s is used by %s, which is not in the plan", im.Ref, u.Component)
			}
		}
	}
	for capName, provider := range p.Capabilities {
		n := 0
		for _, c := range p.Components {
			for _, pr := range c.Provides {
				if pr == capName {
					n++
				}
			}
		}
		if n != 1 || p.Component(provider) == nil {
			t.Errorf("capability %s: provider %s, %d selected providers, want exactly one", capName, provider, n)
		}
	}
}

// TestResolveReleaseWithoutArch covers a release directory that ships only
// one arch: asking for the other is an error naming the missing file.
func TestResolveReleaseWithoutArch(t *testing.T) {
	dir := t.TempDir()
	src := testutil.ReleaseDir(t, "release-4.18")
	data := testutil.ReadFile(t, filepath.Join(src, "release-x86_64.json"))
	testutil.WriteFile(t, filepath.Join(dir, "release-x86_64.json"), data)
	rel, err := releases.LoadDir(dir)
	if err != nil {
		t.Fatalf("LoadDir(%s) = %v", dir, err)
	}
	_, err = compose.Resolve(context.Background(), assembletest.Catalog(t), rel, compose.Request{Profile: "full", Arch: releases.AArch64})
	want := "release 4.18 (" + dir + ") has no release-aarch64.json: it does not ship aarch64"
	if err == nil || err.Error() != want {
		t.Errorf("Resolve(full, aarch64) = %v, want %q", err, want)
	}
	if _, err := compose.Resolve(context.Background(), assembletest.Catalog(t), rel, compose.Request{Profile: "full", Arch: releases.X86_64}); err != nil {
		t.Errorf("Resolve(full, x86_64) = %v, want success", err)
	}
}

// TestResolveCancelled checks that a cancelled context stops resolution.
func TestResolveCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := compose.Resolve(ctx, assembletest.Catalog(t), assembletest.Release(t, "5.0"), compose.Request{Profile: "full", Arch: releases.X86_64})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Resolve(cancelled) = %v, want context.Canceled", err)
	}
}
