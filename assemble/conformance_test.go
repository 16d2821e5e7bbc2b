package assemble_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// The conformance suite checks the product against upstream MicroShift
// itself: for every release directory in ../shared/reference, both arches,
// the four profiles alone and with each optional component that release
// ships (by its RPM list), a build either succeeds with outputs that are
// right for that release, or is refused with the documented reason. What is
// "right" is computed here from the upstream files and a few facts about
// MicroShift stated below, not from the catalog.

// upstreamFacts are what the expectations rest on, from openshift/microshift:
// the release a setting or mechanism first exists in.
const (
	cniPluginSince   = "4.18" // network.cniPlugin (pkg/config/network.go)
	storageSince     = "4.17" // storage.driver, storage.optionalCsiComponents
	multusDropInFrom = "4.19" // microshift-multus ships config.d/00-enable-multus.yaml
	configDFrom      = "4.18" // /etc/microshift/config.d is read
)

// optionalRPMs maps each optional MicroShift RPM to the component that
// installs it.
var optionalRPMs = map[string]string{
	"microshift-olm":                   "olm",
	"microshift-multus":                "multus",
	"microshift-low-latency":           "low-latency",
	"microshift-gateway-api":           "gateway-api",
	"microshift-ai-model-serving":      "ai-model-serving",
	"microshift-observability":         "observability",
	"microshift-cert-manager":          "cert-manager",
	"microshift-sriov":                 "sriov",
	"microshift-metrics-server":        "metrics-server",
	"microshift-metrics-kube-state":    "kube-state-metrics",
	"microshift-metrics-node-exporter": "node-exporter",
}

// coreRPMs are always installed (the microshift RPM requires them).
var coreRPMs = []string{"microshift", "microshift-release-info", "microshift-selinux", "microshift-networking", "microshift-greenboot"}

// upstreamDeps are the components another one cannot work without
// (Multus waits for OVN-K's CNI config; SR-IOV needs Multus; the snapshot
// controller needs a CSI driver, LVMS by default).
var upstreamDeps = map[string][]string{
	"multus":              {"networking-ovnk"},
	"sriov":               {"multus"},
	"snapshot-controller": {"storage-lvms"},
}

var conformanceProfiles = map[string][]string{
	"minimal":         {"core"},
	"networking-only": {"core", "networking-ovnk"},
	"storage-only":    {"core", "storage-lvms"},
	"full":            {"core", "networking-ovnk", "storage-lvms", "snapshot-controller"},
}

// x86Only are components upstream ships for x86_64 only (ExclusiveArch).
var x86Only = map[string]bool{"ai-model-serving": true}

type cell struct {
	release, arch, selection string
	outcome                  string // "ok", "refused"
	wrong                    string // why the cell is wrong, "" when right
}

func TestConformance(t *testing.T) {
	releaseRoot := testutil.Shared(t, "reference", "microshift-release")
	entries, err := os.ReadDir(releaseRoot)
	if err != nil {
		t.Fatal(err)
	}
	cat := assembletest.Catalog(t)
	know, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		cells []cell
	)
	record := func(c cell) {
		mu.Lock()
		defer mu.Unlock()
		cells = append(cells, c)
	}
	t.Run("releases", func(t *testing.T) {
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			branch := e.Name()
			t.Run(branch, func(t *testing.T) {
				t.Parallel()
				dir := filepath.Join(releaseRoot, branch)
				rel, err := releases.LoadDir(dir)
				if err != nil {
					t.Fatalf("LoadDir(%s) = %v", dir, err)
				}
				facts, err := know.For(rel.Version)
				if err != nil {
					t.Fatalf("knowledge for %s: %v", rel.Stream(), err)
				}
				rpms := rpmList(t, branch)
				check := func(c cell) {
					record(c)
					if c.wrong != "" {
						t.Errorf("%s %s %s: %s", c.release, c.arch, c.selection, c.wrong)
					}
				}
				for _, arch := range releases.Arches {
					for _, sel := range selections(rpms) {
						// On the release's default distro, and on each
						// distro it is built for that is image mode only
						// (RHEL 10: a bootc build, no blueprint).
						for _, d := range facts.Distros {
							if !d.Default && !d.BootcOnly() {
								continue
							}
							tgt := target{distro: d.Name, bootcOnly: d.BootcOnly(), bootcBase: d.BootcBase}
							if d.Default {
								tgt.distro = ""
							}
							c := conformanceCell(t, cat, rel, facts, dir, rpms, arch, sel, tgt)
							c.release, c.arch = rel.Stream(), string(arch)
							check(c)
						}
					}
					// The release files of a shipped version of the
					// stream (as its microshift-release-info RPM installs
					// them) pin every MicroShift RPM to that version.
					c := shippedCell(t, cat, rel, arch)
					c.release, c.arch = rel.Stream(), string(arch)
					check(c)
				}
				// The release's own default config.yaml is a valid --config.
				cfgPath := testutil.Shared(t, "reference", "microshift-config", "config.yaml."+branch)
				cfg, err := microshiftconfig.Load(cfgPath)
				if err == nil {
					_, err = assemble.Plan(context.Background(), cat, rel, compose.Request{Profile: "full", Arch: releases.X86_64, Config: cfg})
				}
				wrong := ""
				if err != nil {
					wrong = fmt.Sprintf("its default config.yaml is refused: %v", err)
					t.Errorf("%s: %s", rel.Stream(), wrong)
				}
				record(cell{release: rel.Stream(), arch: "-", selection: "full --config config.yaml." + branch, outcome: okOr(err), wrong: wrong})
			})
		}
	})
	t.Run("microshift-io", func(t *testing.T) {
		for _, branch := range microshiftIOBranches {
			t.Run(branch, func(t *testing.T) {
				t.Parallel()
				for _, c := range microshiftIOCells(t, cat, branch) {
					record(c)
					if c.wrong != "" {
						t.Errorf("%s %s %s: %s", c.release, c.arch, c.selection, c.wrong)
					}
				}
			})
		}
	})
	report(t, cells)
}

func okOr(err error) string {
	if err != nil {
		return "refused"
	}
	return "ok"
}

// selections are the four profiles alone and with each optional component
// the release ships.
func selections(rpms []string) [][2]string {
	var optional []string
	for _, r := range rpms {
		if c, ok := optionalRPMs[r]; ok {
			optional = append(optional, c)
		}
	}
	sort.Strings(optional)
	var out [][2]string
	for _, p := range slices.Sorted(maps.Keys(conformanceProfiles)) {
		out = append(out, [2]string{p, ""})
		for _, c := range optional {
			out = append(out, [2]string{p, c})
		}
	}
	return out
}

// greenbootWaitsForOVNK reports whether the branch's greenboot check
// (packaging/greenboot/microshift-running-check.sh) waits for the
// openshift-ovn-kubernetes pods whatever the config says: its PODS_NS_LIST
// names the namespace. Then a device without OVN-K never has a green boot.
// From 4.19 the script runs `microshift healthcheck`, which skips OVN-K
// when network.cniPlugin is none.
func greenbootWaitsForOVNK(t *testing.T, branch string) bool {
	t.Helper()
	data, err := os.ReadFile(testutil.Shared(t, "reference", "microshift-greenboot", branch, "microshift-running-check.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if list, ok := strings.CutPrefix(l, "PODS_NS_LIST=("); ok {
			return slices.Contains(strings.Fields(strings.TrimSuffix(list, ")")), "openshift-ovn-kubernetes")
		}
	}
	return false
}

// expected is what upstream says a selection must do: the components it
// deploys, or why the release cannot build it.
func expected(release string, arch releases.Arch, profile, with string, rpms []string) ([]string, string) {
	set := map[string]bool{}
	var add func(string)
	add = func(c string) {
		if set[c] {
			return
		}
		set[c] = true
		for _, d := range upstreamDeps[c] {
			add(d)
		}
	}
	for _, c := range conformanceProfiles[profile] {
		add(c)
	}
	if with != "" {
		add(with)
		if x86Only[with] && arch != releases.X86_64 {
			return nil, "arch"
		}
	}
	if !set["networking-ovnk"] && versionLess(release, cniPluginSince) {
		return nil, "cannot honour"
	}
	if (!set["storage-lvms"] || !set["snapshot-controller"]) && versionLess(release, storageSince) {
		return nil, "cannot honour"
	}
	return slices.Sorted(maps.Keys(set)), ""
}

// target is a distro a cell builds for other than the release's default
// (distro ""): a bootc-only one gets a bootc build without a blueprint.
type target struct {
	distro, bootcBase string
	bootcOnly         bool
}

func conformanceCell(t *testing.T, cat *components.Catalog, rel *releases.Release, facts *knowledge.Release, dir string, rpms []string, arch releases.Arch, sel [2]string, tgt target) cell {
	profile, with := sel[0], sel[1]
	c := cell{selection: profile}
	req := compose.Request{Profile: profile, Arch: arch, AllowUnpinned: true, Distro: tgt.distro}
	if with != "" {
		c.selection += " +" + with
		req.With = []string{with}
	}
	if tgt.distro != "" {
		c.selection += " on " + tgt.distro
	}
	wantComps, wantRefusal := expected(rel.Stream(), arch, profile, with, rpms)
	if wantRefusal == "" && !slices.Contains(wantComps, "networking-ovnk") && greenbootWaitsForOVNK(t, filepath.Base(dir)) {
		wantRefusal = "red boot"
	}
	p, err := assemble.Plan(context.Background(), cat, rel, req)
	var out *output.Dir
	if err == nil {
		out, err = assemble.Build(context.Background(), p, assemble.Options{Bootc: tgt.bootcOnly})
	}
	if err != nil {
		c.outcome = "refused"
		msg := err.Error()
		var cannot *compose.CannotHonourError
		switch {
		case wantRefusal == "":
			c.wrong = "refused, want a build: " + msg
		case strings.ContainsAny(msg, "\n\r"):
			c.wrong = "refusal is not one line: " + msg
		case wantRefusal == "cannot honour" && (!errors.As(err, &cannot) || !strings.Contains(msg, "release "+rel.Stream())):
			c.wrong = "refused, but not as a release that cannot honour it: " + msg
		case wantRefusal == "arch" && !strings.Contains(msg, "does not support "+string(arch)):
			c.wrong = "refused, but not for its arch: " + msg
		case wantRefusal == "red boot" && (!errors.Is(err, compose.ErrRedBoot) || !strings.Contains(msg, "--allow-red-boot")):
			c.wrong = "refused, but not as a device that never becomes healthy, naming --allow-red-boot: " + msg
		case wantRefusal != "red boot" && errors.Is(err, compose.ErrRedBoot):
			c.wrong = "refused as a red boot, want " + wantRefusal + ": " + msg
		}
		return c
	}
	c.outcome = "ok"
	if wantRefusal != "" {
		c.wrong = "built, want a refusal (" + wantRefusal + ")"
		return c
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if got := slices.Sorted(slices.Values(p.ComponentNames())); !reflect.DeepEqual(got, wantComps) {
		bad("components %v, want %v", got, wantComps)
	}
	// Images: exactly the union of the selected components' release-file
	// entries for the arch.
	got := testutil.Lines(assembletest.File(t, out, output.ImagesFile))
	want := assembletest.UpstreamImages(t, dir, arch, wantComps)
	if !reflect.DeepEqual(got, want) {
		bad("images.txt has %d references, want the %d of the upstream release files", len(got), len(want))
	}
	if tgt.bootcOnly {
		// Image mode only: the Containerfile on the distro's bootc base,
		// and no blueprint (no image type of the distro takes one).
		if out.File(output.BlueprintFile) != nil {
			bad("writes a blueprint for %s, which has no rpm-ostree image types", tgt.distro)
		}
		if cf := out.File(output.Containerfile); cf == nil || !strings.Contains(string(cf.Data), "\nARG BASE_IMAGE="+tgt.bootcBase+"\n") {
			bad("the Containerfile does not start from %s", tgt.bootcBase)
		}
	} else if src := blueprintContainers(assembletest.File(t, out, output.BlueprintFile)); !reflect.DeepEqual(src, want) {
		bad("blueprint [[containers]] has %d sources, want the %d of images.txt", len(src), len(want))
	}
	// Packages: real RPMs of this branch, pinned to the release.
	for _, pkg := range p.Packages {
		if !strings.HasPrefix(pkg.Name, "microshift") {
			continue
		}
		if !slices.Contains(rpms, pkg.Name) {
			bad("package %s is not built by this release's microshift.spec", pkg.Name)
		}
		if pkg.Version != rel.Stream()+".*" {
			bad("package %s is pinned to %q, want %s.*", pkg.Name, pkg.Version, rel.Stream())
		}
	}
	for _, comp := range wantComps {
		for rpm, c := range optionalRPMs {
			if c == comp && !slices.ContainsFunc(p.Packages, func(pk plan.Package) bool { return pk.Name == rpm }) {
				bad("%s is selected but its RPM %s is not installed", comp, rpm)
			}
		}
	}
	for _, rpm := range coreRPMs {
		if !slices.ContainsFunc(p.Packages, func(pk plan.Package) bool { return pk.Name == rpm }) {
			bad("core RPM %s is missing", rpm)
		}
	}
	problems = append(problems, checkWrittenConfig(out, p, rel.Stream(), facts, wantComps)...)
	if len(problems) > 0 {
		c.wrong = strings.Join(problems, "; ")
	}
	return c
}

// checkWrittenConfig checks the config file the plan writes: where it goes,
// that each key and value is one the release accepts, and that it turns off
// exactly what the selection leaves out (what a device of that release does
// with it), never touching what an RPM configures itself.
func checkWrittenConfig(out *output.Dir, p *plan.Plan, release string, facts *knowledge.Release, comps []string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	var files []string
	for _, f := range p.Files {
		if strings.HasPrefix(f.Path, "/etc/microshift/config.d/") || f.Path == "/etc/microshift/config.yaml" {
			files = append(files, f.Path)
		}
	}
	var data []byte
	switch {
	case len(files) > 1:
		bad("writes %d MicroShift config files %v, want at most one", len(files), files)
		return problems
	case len(files) == 1:
		if versionLess(release, configDFrom) && files[0] != "/etc/microshift/config.yaml" {
			bad("writes %s, which MicroShift %s never reads", files[0], release)
		}
		f := out.File(output.Path(files[0]))
		if f == nil {
			bad("config file %s is not in the output", files[0])
			return problems
		}
		data = f.Data
	}
	var tree map[string]any
	if err := yaml.Unmarshal(data, &tree); err != nil {
		bad("config is not YAML: %v", err)
		return problems
	}
	if tree == nil {
		tree = map[string]any{}
	}
	cfg, err := microshiftconfig.Parse("written config", data)
	if err != nil {
		bad("written config does not parse: %v", err)
		return problems
	}
	if err := microshiftconfig.Check(facts.Config, cfg.Tree); err != nil {
		bad("written config breaks the release's rules: %v", err)
	}
	get := func(path string) any {
		var cur any = tree
		for _, part := range strings.Split(path, ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil
			}
			cur = m[part]
		}
		return cur
	}
	has := func(c string) bool { return slices.Contains(comps, c) }
	want := map[string]any{}
	if !versionLess(release, cniPluginSince) && !has("networking-ovnk") {
		want["network.cniPlugin"] = "none"
	}
	if !versionLess(release, storageSince) {
		if !has("storage-lvms") {
			want["storage.driver"] = "none"
		}
		if !has("snapshot-controller") {
			want["storage.optionalCsiComponents"] = []any{"none"}
		}
	}
	for _, path := range []string{"network.cniPlugin", "storage.driver", "storage.optionalCsiComponents"} {
		if g := get(path); !reflect.DeepEqual(g, want[path]) {
			bad("config %s = %v, want %v", path, g, want[path])
		}
	}
	if g := get("network.multus"); g != nil {
		bad("config sets network.multus %v; the multus RPM (from %s) or MicroShift's default decides it", g, multusDropInFrom)
	}
	return problems
}

// report prints the table (release x arch x selection), the totals, and
// writes it to $CONFORMANCE_REPORT when set (make test prints it).
func report(t *testing.T, cells []cell) {
	sort.Slice(cells, func(i, j int) bool {
		a, b := cells[i], cells[j]
		// microshift-io's builds ("io-4.21") after Red Hat's releases.
		if ai, bi := strings.HasPrefix(a.release, "io-"), strings.HasPrefix(b.release, "io-"); ai != bi {
			return bi
		}
		if a.release != b.release {
			return versionLess(strings.TrimPrefix(a.release, "io-"), strings.TrimPrefix(b.release, "io-"))
		}
		if a.arch != b.arch {
			return a.arch < b.arch
		}
		return a.selection < b.selection
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s %-8s %-34s %s\n", "RELEASE", "ARCH", "SELECTION", "RESULT")
	totals := map[string]int{}
	wrong := 0
	for _, c := range cells {
		result := c.outcome
		if c.wrong != "" {
			result = "WRONG: " + c.wrong
			wrong++
		}
		totals[c.outcome]++
		fmt.Fprintf(&b, "%-6s %-8s %-34s %s\n", c.release, c.arch, c.selection, result)
	}
	summary := fmt.Sprintf("conformance: %d cells: %d built, %d refused with the release's reason, %d wrong", len(cells), totals["ok"], totals["refused"], wrong)
	b.WriteString(summary + "\n")
	t.Log("\n" + b.String())
	if path := os.Getenv("CONFORMANCE_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Errorf("writing %s: %v", path, err)
		}
	}
	if len(cells) == 0 {
		t.Error("no conformance cells ran")
	}
}

// rpmList reads the RPM names a branch's spec builds.
func rpmList(t *testing.T, branch string) []string {
	t.Helper()
	f, err := os.Open(testutil.Shared(t, "reference", "microshift-packaging", "rpm-packages."+branch+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// versionLess compares major.minor streams.
func versionLess(a, b string) bool {
	var am, an, bm, bn int
	fmt.Sscanf(a, "%d.%d", &am, &an)
	fmt.Sscanf(b, "%d.%d", &bm, &bn)
	return am < bm || am == bm && an < bn
}

// shippedCell builds the full profile from the release's files with a
// shipped version as their base (X.Y.5), as the microshift-release-info RPM
// of that version installs them: every MicroShift RPM is pinned to exactly
// that version in the lock, the blueprint and the Containerfile, so the
// device installs the RPMs whose images are embedded.
func shippedCell(t *testing.T, cat *components.Catalog, rel *releases.Release, arch releases.Arch) cell {
	version := rel.Stream() + ".5"
	c := cell{selection: "full from shipped " + version}
	dir := t.TempDir()
	for _, f := range rel.Files() {
		shipped := *f
		shipped.Base = version
		if err := os.WriteFile(filepath.Join(dir, f.Name), shipped.Encode(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shipped, err := releases.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := assemble.Plan(context.Background(), cat, shipped, compose.Request{Profile: "full", Arch: arch, ExactVersion: true})
	var out *output.Dir
	if err == nil {
		bootc := p.Target.BootcBase != ""
		out, err = assemble.Build(context.Background(), p, assemble.Options{Bootc: bootc})
	}
	if err != nil {
		c.outcome, c.wrong = "refused", "refused, want a build: "+err.Error()
		return c
	}
	c.outcome = "ok"
	var problems []string
	bp := string(assembletest.File(t, out, output.BlueprintFile))
	var cf string
	if f := out.File(output.Containerfile); f != nil {
		cf = string(f.Data)
	}
	if p.Release.Pin != plan.PinExact {
		problems = append(problems, fmt.Sprintf("lock pin %q, want exact", p.Release.Pin))
	}
	for _, pkg := range p.Packages {
		if !strings.HasPrefix(pkg.Name, "microshift") {
			continue
		}
		if pkg.Version != version {
			problems = append(problems, fmt.Sprintf("package %s is pinned to %q, want %s", pkg.Name, pkg.Version, version))
		}
		if !strings.Contains(bp, fmt.Sprintf("name = %q\nversion = %q\n", pkg.Name, version)) {
			problems = append(problems, fmt.Sprintf("blueprint does not pin %s to %s", pkg.Name, version))
		}
		if cf != "" && !strings.Contains(cf, " "+pkg.Name+"-"+version+" \\\n") {
			problems = append(problems, fmt.Sprintf("Containerfile does not install %s-%s", pkg.Name, version))
		}
	}
	c.wrong = strings.Join(problems, "; ")
	return c
}
