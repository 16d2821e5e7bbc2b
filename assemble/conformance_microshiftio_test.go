package assemble_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// The conformance cells of microshift-io's build: its build of each
// reference release it exists for (from 4.19), as
// assembletest.MicroShiftIO makes it, checked against what microshift-io's
// sources say, stated here and not read from the catalog or the knowledge:
//
//   - its profiles keep their meaning with its own CNI and CSI: kindnet
//     (with kube-proxy, src/kindnet) and TopoLVM (src/topolvm);
//   - OVN-K, OLM and Multus stay (prebuild.sh replaces their images with
//     OKD's); Multus needs OVN-K; kindnet and OVN-K are two CNIs;
//   - LVMS is not there (its operator image is Red Hat's);
//   - its RPMs (microshift-kindnet and microshift-topolvm among them) are
//     pinned to the build's version-release, their drop-ins set
//     network.cniPlugin and storage.driver themselves;
//   - its distro is CentOS Stream 9 (bootc base stream9), and its images
//     come from no Red Hat registry.
var microshiftIOBranches = []string{"release-4.19", "release-4.20", "release-4.21", "release-4.22", "main"}

// microshiftIOProfiles are the profiles on microshift-io's build.
var microshiftIOProfiles = map[string][]string{
	"minimal":         {"core"},
	"networking-only": {"core", "kindnet"},
	"storage-only":    {"core", "topolvm"},
	"full":            {"core", "kindnet", "topolvm", "snapshot-controller"},
}

// microshiftIODeps are what another component cannot work without there.
var microshiftIODeps = map[string][]string{"multus": {"networking-ovnk"}}

// microshiftIORPMs are the RPMs of its components.
var microshiftIORPMs = map[string][]string{
	"kindnet": {"microshift-kindnet", "microshift-kindnet-release-info"},
	"topolvm": {"microshift-topolvm", "microshift-topolvm-release-info"},
	"olm":     {"microshift-olm", "microshift-olm-release-info"},
	"multus":  {"microshift-multus", "microshift-multus-release-info"},
}

func microshiftIOCells(t *testing.T, cat *components.Catalog, branch string) []cell {
	rel := assembletest.MicroShiftIO(t, branch)
	label := "io-" + rel.Stream()
	version := strings.TrimSuffix(strings.TrimPrefix(rel.RPMs[0].NEVRA, "microshift-release-info-"), ".noarch")
	repo := []compose.RepoFile{{Source: "io.repo", Data: []byte("[microshift-io]\nbaseurl=https://rpms.example.com/io/\n")}}
	var out []cell
	for _, profile := range slices.Sorted(maps.Keys(microshiftIOProfiles)) {
		for _, with := range []string{"", "olm", "multus", "networking-ovnk", "storage-lvms"} {
			for _, arch := range releases.Arches {
				c := cell{release: label, arch: string(arch), selection: profile}
				req := compose.Request{Profile: profile, Arch: arch, RepoFiles: repo}
				if with != "" {
					c.selection += " +" + with
					req.With = []string{with}
				}
				want, refusal := microshiftIOExpected(profile, with)
				p, err := assemble.Plan(context.Background(), cat, rel, req)
				var o *output.Dir
				if err == nil {
					o, err = assemble.Build(context.Background(), p, assemble.Options{Bootc: true})
				}
				if err != nil {
					c.outcome = "refused"
					var cannot *compose.CannotHonourError
					switch msg := err.Error(); {
					case refusal == "":
						c.wrong = "refused, want a build: " + msg
					case strings.ContainsAny(msg, "\n\r"):
						c.wrong = "refusal is not one line: " + msg
					case refusal == "two CNIs" && !strings.Contains(msg, "kindnet conflicts with networking-ovnk"):
						c.wrong = "refused, but not as two CNIs: " + msg
					case refusal == "no LVMS" && (!errors.As(err, &cannot) || !strings.Contains(msg, "microshift-io's build lacks image lvms_operator")):
						c.wrong = "refused, but not as LVMS missing from the build: " + msg
					}
					out = append(out, c)
					continue
				}
				c.outcome = "ok"
				if refusal != "" {
					c.wrong = "built, want a refusal (" + refusal + ")"
				} else {
					c.wrong = strings.Join(checkMicroShiftIOCell(t, rel, p, o, arch, want, version), "; ")
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// microshiftIOExpected is what microshift-io's build must do with a
// selection: its components, or why it cannot.
func microshiftIOExpected(profile, with string) ([]string, string) {
	set := map[string]bool{}
	var add func(string)
	add = func(c string) {
		set[c] = true
		for _, d := range microshiftIODeps[c] {
			add(d)
		}
	}
	for _, c := range microshiftIOProfiles[profile] {
		add(c)
	}
	if with != "" {
		add(with)
	}
	switch {
	case set["storage-lvms"]:
		return nil, "no LVMS"
	case set["kindnet"] && set["networking-ovnk"]:
		return nil, "two CNIs"
	}
	return slices.Sorted(maps.Keys(set)), ""
}

// checkMicroShiftIOCell checks a build of microshift-io's release.
func checkMicroShiftIOCell(t *testing.T, rel *releases.Release, p *plan.Plan, o *output.Dir, arch releases.Arch, want []string, version string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if got := slices.Sorted(slices.Values(p.ComponentNames())); !reflect.DeepEqual(got, want) {
		bad("components %v, want %v", got, want)
	}
	// Images: exactly those of the release files microshift-io ships for
	// the selection, the TopoLVM tag by the digest it resolved to.
	wantImages := microshiftIOImages(t, rel, arch, want)
	if got := testutil.Lines(assembletest.File(t, o, output.ImagesFile)); !reflect.DeepEqual(got, wantImages) {
		bad("images.txt has %v, want %v", got, wantImages)
	}
	for _, ref := range wantImages {
		if strings.HasPrefix(ref, "registry.redhat.io/") || strings.HasPrefix(ref, "quay.io/openshift-release-dev/") {
			bad("a Red Hat image: %s", ref)
		}
	}
	for _, pkg := range p.Packages {
		if strings.HasPrefix(pkg.Name, "microshift") && pkg.Version != version {
			bad("package %s pinned to %q, want the build's %s", pkg.Name, pkg.Version, version)
		}
	}
	for _, c := range want {
		for _, rpm := range microshiftIORPMs[c] {
			if !slices.ContainsFunc(p.Packages, func(pk plan.Package) bool { return pk.Name == rpm }) {
				bad("%s is selected but its RPM %s is not installed", c, rpm)
			}
		}
	}
	if p.Target.Distro != "centos-stream-9" || p.Target.BootcBase != "quay.io/centos-bootc/centos-bootc:stream9" {
		bad("target %+v, want CentOS Stream 9", p.Target)
	}
	if cf := o.File(output.Containerfile); cf == nil || strings.Contains(string(cf.Data), "pullsecret") || !strings.Contains(string(cf.Data), "\nARG BASE_IMAGE=quay.io/centos-bootc/centos-bootc:stream9\n") {
		bad("the Containerfile does not start from CentOS Stream 9, or asks for a pull secret")
	}
	// Config: what the selection turns off that no RPM of it turns off.
	var cfg map[string]any
	for _, f := range p.Files {
		if strings.HasPrefix(f.Path, "/etc/microshift/config.d/") {
			if err := yaml.Unmarshal(f.Data, &cfg); err != nil {
				bad("config: %v", err)
			}
		}
	}
	get := func(path string) any {
		var cur any = cfg
		for _, part := range strings.Split(path, ".") {
			m, _ := cur.(map[string]any)
			cur = m[part]
		}
		return cur
	}
	has := func(c string) bool { return slices.Contains(want, c) }
	wantCfg := map[string]any{}
	if !has("networking-ovnk") && !has("kindnet") {
		wantCfg["network.cniPlugin"] = "none"
	}
	if !has("topolvm") {
		wantCfg["storage.driver"] = "none"
	}
	if !has("snapshot-controller") {
		wantCfg["storage.optionalCsiComponents"] = []any{"none"}
	}
	for _, path := range []string{"network.cniPlugin", "storage.driver", "storage.optionalCsiComponents"} {
		if g := get(path); !reflect.DeepEqual(g, wantCfg[path]) {
			bad("config %s = %v, want %v", path, g, wantCfg[path])
		}
	}
	return problems
}

// microshiftIOImages computes from the release files with encoding/json the
// images a selection embeds: the core file's but those of OVN-K (unless
// selected), LVMS and the snapshot controller (unless selected); kindnet's
// and kube-proxy's files for kindnet; TopoLVM's file, its tag by the digest
// the release records; OLM's and Multus's files.
func microshiftIOImages(t *testing.T, rel *releases.Release, arch releases.Arch, selected []string) []string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range rel.Files() {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Encode(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) map[string]string {
		var doc struct {
			Images map[string]string `json:"images"`
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Images
	}
	has := func(c string) bool { return slices.Contains(selected, c) }
	set := map[string]bool{}
	for key, ref := range read("release-" + string(arch) + ".json") {
		switch {
		case key == "ovn-kubernetes-microshift" && !has("networking-ovnk"), key == "lvms_operator", key == "csi-snapshot-controller" && !has("snapshot-controller"):
		default:
			set[ref] = true
		}
	}
	files := map[string][]string{"kindnet": {"kindnet", "kube-proxy"}, "topolvm": {"topolvm"}, "olm": {"olm"}, "multus": {"multus"}}
	for _, c := range selected {
		for _, f := range files[c] {
			for _, ref := range read("release-" + f + "-" + string(arch) + ".json") {
				if pinned, ok := rel.Resolved[ref]; ok {
					ref = pinned
				}
				set[ref] = true
			}
		}
	}
	out := slices.Collect(maps.Keys(set))
	sort.Strings(out)
	return out
}
