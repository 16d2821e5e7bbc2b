package components_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/components"
)

// TestBadCatalogs loads each catalog under testdata/bad over the embedded
// one (as --catalog does). Each breaks one rule. Decoding errors stop at
// the first problem; validation problems are all collected in a
// *ProblemsError whose message is the first one.
func TestBadCatalogs(t *testing.T) {
	const portFormat = `must be port:proto, from-to:proto or node-ports:proto (proto tcp or udp)`
	for _, tc := range []struct {
		dir string
		// want is the error message; {c} is the component.toml of
		// "extra", {cat} the catalog.toml, {d} the catalog dir.
		want string
		// problems is the full list for a *ProblemsError; nil means the
		// error must not be one (a decoding error).
		problems []string
	}{
		{dir: "unknown-key", want: `{c}: line 5: unknown key "descripton", "requirez"; did you mean "description"?`},
		{dir: "unknown-nested-key", want: `{c}: line 8: unknown key "images.kyes"; did you mean "images.keys"?`},
		{dir: "syntax-error", want: `{c}: line 5: key "requires": expected a comma (',') or array terminator (']'), but got 'p'`},
		{dir: "wrong-type", want: `{c}: line 3: key "order": must be an integer, got a string`},
		{dir: "missing-name", want: `{c}: missing required key "name"`},
		{dir: "missing-order", want: `{c}: missing required key "order" (the NNN- prefix of its manifests.d directory)`},
		{dir: "name-mismatch", want: `{c}: name "extras" does not match its directory "extra"`},
		{dir: "arch-go-spelling", want: `{c}: arches: write "amd64" in uname style (x86_64, aarch64)`},
		{dir: "arch-unknown", want: `{c}: arches: unknown arch "ppc64le" (want x86_64 or aarch64)`},
		{dir: "bad-release-constraint", want: `{c}: release: invalid semver constraint ">=4.18 <<5": improper constraint: >=4.18 <<5`},
		{dir: "catalog-syntax-error", want: `{cat}: line 3: key "capabilities.cni.default": expected value but found "networking" instead`},
		{dir: "catalog-unknown-key", want: `{cat}: line 3: unknown key "profiles.edge.componets"; did you mean "profiles.edge.components"?`},
		{dir: "component-not-a-directory", want: `{d}/components/extra: not a directory: each component lives in components/<name>/component.toml`},
		{dir: "component-toml-missing", want: `{c}: no such file or directory`},
		{dir: "manifests-unknown-key", want: `{c}: line 7: unknown key "manifests.imgaes"; did you mean "manifests.images"?`},
		{dir: "release-file-invalid", want: `{d}/components/extra/release/release-extra-x86_64.json: line 1, column 84: duplicate key "agent" in "images"`},

		{dir: "missing-description", problems: []string{`{c}: missing description`}},
		{dir: "manifests-bad-mapping", problems: []string{
			`{c}: manifests.images: "quay.io/example/agent:1.0" must be an image name without tag or digest (as in a kustomization's images[].name)`,
			`{c}: manifests.images: "quay.io/example/helper" maps to "helper", which is not in images.keys`,
		}},
		{dir: "manifests-without-source", problems: []string{
			`{c}: [manifests] is set but the component has neither a manifests/ directory nor a plugin`,
			`{c}: manifests.images: "quay.io/example/agent" maps to "agent", which is not in images.keys`,
		}},
		{dir: "manifests-no-kustomization", problems: []string{`{c}: manifests/ has no kustomization.yaml`}},
		{dir: "plugin-not-executable", problems: []string{`{c}: plugin is not executable (chmod +x {d}/components/extra/plugin)`}},
		{dir: "release-file-foreign", problems: []string{
			`{c}: release/release-extra-aarch64.json: image key "extra-key" is not in images.keys`,
			`{c}: release/release-olm-x86_64.json: a component may bring only its own release-extra-<arch>.json files (images.file is "extra")`,
		}},
		{dir: "bad-name", problems: []string{`{d}/components/Extra_1/component.toml: name "Extra_1" must be lowercase letters, digits and dashes (at most 63)`}},
		{dir: "order-out-of-range", problems: []string{`{c}: order 1000 is out of range 0-999`}},
		{dir: "negative-order", problems: []string{`{c}: order -1 is out of range 0-999`}},
		{dir: "unknown-requires", problems: []string{`{c}: requires: unknown component or capability "mutlus"; did you mean "multus"?`}},
		{dir: "unknown-conflicts", problems: []string{
			`{c}: conflicts: unknown component or capability "networking-brige"; did you mean "networking-ovnk"?`,
			`{c}: conflicts: unknown component or capability "nothing-like-it"`,
		}},
		{dir: "unknown-provides", problems: []string{`{c}: provides: unknown capability "gpu" (declare it in catalog.toml [capabilities.gpu])`}},
		{dir: "capability-default-unknown", problems: []string{`{cat}: capability "cni": default provider unknown component or capability "networking-ovk"; did you mean "networking-ovnk"?`}},
		{dir: "capability-default-not-provider", problems: []string{`{cat}: capability "csi": default provider "multus" does not provide it`}},
		{dir: "capability-no-default", problems: []string{`{cat}: capability "csi" has no default provider (one of storage-hostpath, storage-lvms, topolvm)`}},
		{dir: "profile-unknown-component", problems: []string{`{cat}: profile "edge": unknown component "mutlus"; did you mean "multus"?`}},
		{dir: "profile-duplicate-component", problems: []string{`{cat}: profile "edge" lists "core" twice`}},
		{dir: "profile-empty", problems: []string{`{cat}: profile "edge" selects no components`}},
		{dir: "builds-bad", problems: []string{
			`{c}: builds: "fedora" is not a build of MicroShift microshift-compose knows (redhat, microshift-io), or is listed twice`,
			`{c}: default_for: "csi" is not a capability it provides`,
		}},
		{dir: "images-also-bad", problems: []string{
			`{c}: default_for: "csi" is not a capability it provides`,
			`{c}: default_for: "csi": a component is the default provider of a capability on the builds it names (builds); the catalog-wide default is catalog.toml's`,
			`{c}: images.also[0]: file "extra": name a release file of its own (the <component> part of release-<component>-<arch>.json), not the core file nor one named before`,
			`{c}: images.also[1]: list its keys (and no also of its own)`,
		}},
		{dir: "requires-cycle", problems: []string{`{d}/components/networking-ovnk/component.toml: dependency cycle: networking-ovnk -> storage-lvms -> networking-ovnk`}},
		{dir: "duplicate-image-key", problems: []string{
			`{c}: image key "cli" of release-<arch>.json is already claimed by component "core"`,
			`{c}: image key "coredns" of release-<arch>.json is already claimed by component "core"`,
		}},
		{dir: "bad-firewall-port", problems: []string{
			`{c}: firewall.ports: "80/tcp" ` + portFormat,
			`{c}: firewall.ports: "8080:sctp" ` + portFormat,
		}},
		{dir: "bad-firewall-port-range", problems: []string{
			`{c}: firewall.ports: "0:tcp": port out of range 1-65535`,
			`{c}: firewall.ports: "70000:tcp": port out of range 1-65535`,
			`{c}: firewall.ports: "9000-8000:udp": port out of range 1-65535`,
		}},
		{dir: "bad-trusted-source", problems: []string{
			`{c}: firewall.trusted_sources: "10.0.0.0/33" is not an IP address, a CIDR or "cluster-network"`,
			`{c}: firewall.trusted_sources: "cluster-networks" is not an IP address, a CIDR or "cluster-network"`,
		}},
		{dir: "file-path-relative", problems: []string{`{c}: files[0]: path "etc/extra.conf" must be absolute and clean`}},
		{dir: "file-source-missing", problems: []string{`{c}: files[0]: source "files/extra.conf" does not exist in the component directory`}},
		{dir: "file-content-and-source", problems: []string{`{c}: files[0]: set content or source, not both`}},
		{dir: "file-bad-mode", problems: []string{`{c}: files[0]: mode "0999" is not an octal permission mode from 0000 to 0777, such as "0644"`}},
		{dir: "config-array-of-tables", problems: []string{`{c}: config.selected.apiServer.namedCertificates: arrays of tables are not supported`}},
		// [[variant]] entries.
		{dir: "variant-missing-release", want: `{c}: variant[0]: missing required key "release" (the MicroShift releases it applies to)`},
		{dir: "variant-bad-release", want: `{c}: variant[0]: release: invalid semver constraint "4.18 -": improper constraint: 4.18 -`},
		{dir: "variant-unknown-key", want: `{c}: line 7: unknown key "variant.pakages"; did you mean "variant.packages"?`},
		{dir: "variant-overlap", problems: []string{`{c}: variant[0] (release >=4.18) and variant[1] (release >=4.19, <4.21) both apply to release 4.19; make their ranges disjoint`}},
		{dir: "variant-bad-fields", problems: []string{
			`{c}: variant[0] (release >=4.18): config.selected.apiServer.namedCertificates: arrays of tables are not supported`,
			`{c}: variant[0] (release >=4.18): images.file: "Extra" must be the <component> part of release-<component>-<arch>.json`,
			`{c}: variant[0] (release >=4.18): images.keys: "agent" is listed twice`,
			`{c}: variant[0] (release >=4.18): packages: "microshift olm" is not a package name`,
		}},
		{dir: "repositories-bad", problems: []string{
			`{c}: repositories[0]: baseurl "ftp://mirror.example.com/extra/$basearch" must be an http or https URL (the directory holding repodata/; $basearch for the arch)`,
			`{c}: repositories[0]: id "extra repo" must be letters, digits and ._:-$ (a dnf repository ID)`,
			`{c}: repositories[0]: packages: "extra-other" is not one of the component's packages`,
			`{c}: repositories[1]: packages: "extra-agent" comes from extra repo too`,
			`{c}: repositories[2]: packages: name the component's packages it provides`,
			`{c}: variant[0] (release >=4.18): repositories[0]: baseurl "https:///no-host" must be an http or https URL (the directory holding repodata/; $basearch for the arch)`,
			`{c}: variant[0] (release >=4.18): repositories[0]: packages: "extra-tools" is not one of the component's packages`,
		}},
		{dir: "variant-claims-core-key", problems: []string{`{c}: image key "pod" of release-<arch>.json is already claimed by component "core" (release 4.19)`}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join("testdata", "bad", tc.dir)
			expand := strings.NewReplacer(
				"{c}", filepath.Join(dir, "components", "extra", "component.toml"),
				"{cat}", filepath.Join(dir, "catalog.toml"),
				"{d}", dir,
			).Replace
			cat, err := components.Load(dir)
			if err == nil {
				t.Fatalf("Load(%s) = %d components, nil; want an error", dir, len(cat.Components))
			}
			var pe *components.ProblemsError
			isProblems := errors.As(err, &pe)
			if tc.problems == nil {
				if isProblems {
					t.Fatalf("Load(%s) = ProblemsError %v; want a decoding error", dir, pe.Problems)
				}
				if want := expand(tc.want); err.Error() != want {
					t.Fatalf("Load(%s) error:\n got: %s\nwant: %s", dir, err, want)
				}
				return
			}
			if !isProblems {
				t.Fatalf("Load(%s) = %v; want a *ProblemsError", dir, err)
			}
			var got, want []string
			for _, p := range pe.Problems {
				got = append(got, p.Error())
			}
			for _, p := range tc.problems {
				want = append(want, expand(p))
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Load(%s) problems:\n got: %q\nwant: %q", dir, got, want)
			}
			wantMsg := want[0]
			if len(want) > 1 {
				more := " more problems"
				if len(want) == 2 {
					more = " more problem"
				}
				wantMsg += " (and " + strconv.Itoa(len(want)-1) + more + "; run 'microshift-compose validate' to list them)"
			}
			if err.Error() != wantMsg {
				t.Errorf("Load(%s) message:\n got: %s\nwant: %s", dir, err, wantMsg)
			}
		})
	}
}

func TestLoadDirErrors(t *testing.T) {
	empty := t.TempDir()
	file := filepath.Join(empty, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(empty, "missing")
	for _, tc := range []struct {
		name, dir, want string
	}{
		{"missing", missing, "catalog " + missing + " does not exist"},
		{"a file", file, "catalog " + file + " is not a directory"},
		{"empty", empty, empty + ": not a catalog: no catalog.toml and no components/<name>/component.toml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := components.Load(tc.dir)
			if err == nil || err.Error() != tc.want {
				t.Errorf("Load(%s) = %v, want %q", tc.dir, err, tc.want)
			}
		})
	}
}

func TestLoadEmbeddedOnly(t *testing.T) {
	a, err := components.Load("")
	if err != nil {
		t.Fatal(err)
	}
	b, err := components.Default()
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("Load(\"\") is not the Default() catalog")
	}
}

// TestEmbeddedCatalogProblems checks the catalog the binary embeds, which
// Default does not check at run time: this test is what keeps a catalog
// with problems out of the binary.
func TestEmbeddedCatalogProblems(t *testing.T) {
	cat, err := components.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range cat.Problems() {
		t.Errorf("embedded catalog: %v", p)
	}
}

// TestLoadOverlay: a user's catalog replaces an embedded component (olm)
// and adds a component and a profile; everything else stays embedded.
func TestLoadOverlay(t *testing.T) {
	dir := filepath.Join("testdata", "overlay")
	cat, err := components.Load(dir)
	if err != nil {
		t.Fatalf("Load(%s) = %v", dir, err)
	}
	def, err := components.Default()
	if err != nil {
		t.Fatal(err)
	}
	if len(cat.Components) != len(def.Components)+1 {
		t.Errorf("%d components, want %d", len(cat.Components), len(def.Components)+1)
	}
	if len(cat.Profiles) != 5 || cat.Profiles["full"] == nil {
		t.Errorf("profiles = %v, want the four embedded ones and edge", cat.ProfileNames())
	}
	edge := cat.Profiles["edge"]
	if edge == nil || !reflect.DeepEqual(edge.Components, []string{"core", "networking-ovnk", "edge-agent"}) || edge.Source != filepath.Join(dir, "catalog.toml") {
		t.Errorf("profile edge = %+v", edge)
	}
	olm := cat.Components["olm"]
	if olm.Description != "OLM from the site's own mirror" || olm.Source != filepath.Join(dir, "components", "olm", "component.toml") || olm.Dir != filepath.Join(dir, "components", "olm") {
		t.Errorf("olm was not replaced: %+v", olm)
	}
	if def.Components["olm"].Description == olm.Description {
		t.Errorf("loading an overlay changed the embedded catalog")
	}
	agent := cat.Components["edge-agent"]
	if agent == nil {
		t.Fatal("edge-agent missing")
	}
	if agent.Order != 95 || !reflect.DeepEqual(agent.Requires, []string{"core", "cni"}) || agent.Arches != nil {
		t.Errorf("edge-agent = %+v", agent)
	}
	if !reflect.DeepEqual(agent.Config.Selected, map[string]any{"debugging": map[string]any{"logLevel": "Debug"}}) {
		t.Errorf("edge-agent config = %#v", agent.Config.Selected)
	}
	wantFiles := []components.File{
		{Path: "/etc/edge-agent/agent.conf", Mode: "0600", Source: "files/agent.conf"},
		{Path: "/etc/edge-agent/site", Content: "site-1\n"},
	}
	if !reflect.DeepEqual(agent.Files, wantFiles) {
		t.Errorf("edge-agent files = %+v", agent.Files)
	}
	if !reflect.DeepEqual(agent.Firewall, components.Firewall{Ports: []string{"8443:tcp", "9000-9010:udp"}, TrustedSources: []string{"192.168.7.0/24"}}) {
		t.Errorf("edge-agent firewall = %+v", agent.Firewall)
	}
	data, err := fsReadFile(agent, "files/agent.conf")
	if err != nil || data != "endpoint = \"https://fleet.example.com\"\n" {
		t.Errorf("reading files/agent.conf through the component FS = %q, %v", data, err)
	}
	// Untouched embedded components are the embedded ones.
	if cat.Components["core"].Source != "embedded catalog: components/core/component.toml" {
		t.Errorf("core source = %q", cat.Components["core"].Source)
	}
}

func TestLoadOnly(t *testing.T) {
	// The overlay on its own lacks core and the cni capability.
	dir := filepath.Join("testdata", "overlay")
	_, err := components.LoadOnly(dir)
	var pe *components.ProblemsError
	if !errors.As(err, &pe) {
		t.Fatalf("LoadOnly(%s) = %v, want a *ProblemsError", dir, err)
	}
	agent := filepath.Join(dir, "components", "edge-agent", "component.toml")
	olm := filepath.Join(dir, "components", "olm", "component.toml")
	cat := filepath.Join(dir, "catalog.toml")
	want := []string{
		cat + `: profile "edge": unknown component "core"`,
		cat + `: profile "edge": unknown component "networking-ovnk"`,
		agent + `: requires: unknown component or capability "cni"`,
		agent + `: requires: unknown component or capability "core"`,
		olm + `: requires: unknown component or capability "core"`,
	}
	var got []string
	for _, p := range pe.Problems {
		got = append(got, p.Error())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LoadOnly problems:\n got: %q\nwant: %q", got, want)
	}
	// A mistyped directory is an error, not an empty catalog.
	missing := filepath.Join(dir, "missing")
	if _, err := components.LoadOnly(missing); err == nil || err.Error() != "catalog "+missing+" does not exist" {
		t.Errorf("LoadOnly(missing dir) = %v", err)
	}
}

func TestProblemsError(t *testing.T) {
	one := &components.ProblemsError{Problems: []error{errors.New("a: first")}}
	if one.Error() != "a: first" {
		t.Errorf("one problem: %q", one.Error())
	}
	three := &components.ProblemsError{Problems: []error{errors.New("a: first"), errors.New("b"), errors.New("c")}}
	if want := "a: first (and 2 more problems; run 'microshift-compose validate' to list them)"; three.Error() != want {
		t.Errorf("three problems: %q, want %q", three.Error(), want)
	}
}
