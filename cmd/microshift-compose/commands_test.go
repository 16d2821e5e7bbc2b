package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/plan"
)

// decodeStrict decodes JSON output into v, rejecting fields v does not
// have, so that the test notices when --output json changes shape.
func decodeStrict(t *testing.T, what, data string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: decoding JSON output: %v\n%s", what, err, data)
	}
	if dec.More() {
		t.Fatalf("%s: more than one JSON document in the output", what)
	}
}

var wantProfiles = map[string][]string{
	"minimal":         {"core"},
	"networking-only": {"core", "networking-ovnk"},
	"storage-only":    {"core", "storage-lvms"},
	"full":            {"core", "networking-ovnk", "storage-lvms", "snapshot-controller"},
}

func TestProfiles(t *testing.T) {
	text := mustRun(t, "profiles")
	lines := nonEmptyLines(text)
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("profiles printed %d lines, want a header and 4 profiles:\n%s", len(lines), text)
	}
	for i, name := range []string{"full", "minimal", "networking-only", "storage-only"} {
		fields := strings.Fields(lines[i+1])
		if fields[0] != name || fields[1] != strings.Join(wantProfiles[name], ",") {
			t.Errorf("profiles line %d = %q, want %s with %v", i+1, lines[i+1], name, wantProfiles[name])
		}
	}

	var list []profileJSON
	decodeStrict(t, "profiles --output json", mustRun(t, "profiles", "--output", "json"), &list)
	if len(list) != 4 {
		t.Fatalf("profiles --output json listed %d profiles, want 4: %+v", len(list), list)
	}
	for _, p := range list {
		if want, ok := wantProfiles[p.Name]; !ok || !slices.Equal(p.Components, want) {
			t.Errorf("profile %s has components %v, want %v", p.Name, p.Components, want)
		}
		if p.Description == "" {
			t.Errorf("profile %s has no description", p.Name)
		}
	}
}

func TestComponentsJSON(t *testing.T) {
	byName := func(args ...string) map[string]componentJSON {
		t.Helper()
		var list []componentJSON
		decodeStrict(t, strings.Join(args, " "), mustRun(t, args...), &list)
		m := map[string]componentJSON{}
		for i, c := range list {
			if i > 0 && c.Order <= list[i-1].Order {
				t.Errorf("%v: %s (order %d) listed after %s (order %d); want apply order", args, c.Name, c.Order, list[i-1].Name, list[i-1].Order)
			}
			m[c.Name] = c
		}
		return m
	}

	newest := byName("components", "--output", "json")
	for _, n := range []string{"core", "networking-ovnk", "storage-lvms", "snapshot-controller",
		"multus", "olm", "gateway-api", "cert-manager", "sriov", "metrics-server", "kube-state-metrics",
		"node-exporter", "ai-model-serving", "low-latency", "observability", "storage-hostpath"} {
		if _, ok := newest[n]; !ok {
			t.Errorf("components --output json has no %s", n)
		}
	}
	if got := newest["ai-model-serving"].Arches; !slices.Equal(got, []string{"x86_64"}) {
		t.Errorf("ai-model-serving arches = %v, want [x86_64]", got)
	}
	if got := newest["core"].Arches; !slices.Equal(got, []string{"x86_64", "aarch64"}) {
		t.Errorf("core arches = %v, want [x86_64 aarch64]", got)
	}
	if !newest["cert-manager"].Available {
		t.Errorf("cert-manager is unavailable on the newest release; want available")
	}
	if got := newest["multus"].ImageFile; got != "release-multus-<arch>.json" {
		t.Errorf("multus image_file = %q, want release-multus-<arch>.json", got)
	}
	if got := newest["networking-ovnk"].Provides; !slices.Equal(got, []string{"cni"}) {
		t.Errorf("networking-ovnk provides %v, want [cni]", got)
	}

	// Available means build takes it: a component whose release file is
	// missing, or names images by tag only, is marked so and build refuses
	// it for the reason given; an available one builds.
	if c := newest["gitops"]; c.Available || !strings.Contains(c.Refused["x86_64"], "has no release-gitops-x86_64.json") {
		t.Errorf("gitops on the newest release: available %v, refused %q; want refused for its missing release file", c.Available, c.Refused)
	}
	for _, n := range []string{"ai-model-serving", "storage-hostpath"} {
		if c := newest[n]; c.Available || !c.AllowUnpinned || len(c.Refused) > 0 {
			t.Errorf("%s on the newest release: available %v, allow_unpinned %v, refused %q; want it taken with --allow-unpinned only", n, c.Available, c.AllowUnpinned, c.Refused)
		}
	}
	for name, want := range map[string]int{"gitops": exitError, "storage-hostpath": exitError, "cert-manager": exitOK} {
		_, stderr, code := runGuarded(t, time.Minute, "build", "--profile", "minimal", "--arch", "x86_64", "--with", name, "--output", filepath.Join(t.TempDir(), "out"))
		if code != want {
			t.Errorf("build --with %s = exit %d, want %d (components says available %v): %s", name, code, want, newest[name].Available, stderr)
		}
	}

	old := byName("components", "--output", "json", "--release", "4.18")
	if old["cert-manager"].Available {
		t.Errorf("cert-manager is available on 4.18; want unavailable (it ships from 4.20)")
	}
	if !old["core"].Available || !old["olm"].Available {
		t.Errorf("core or olm unavailable on 4.18: %+v %+v", old["core"], old["olm"])
	}

	text := mustRun(t, "components", "--release", "4.18")
	if !strings.HasPrefix(text, "release 4.18 (embedded)\n") {
		t.Errorf("components text output does not start with the release:\n%s", text)
	}
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == "cert-manager" && !slices.Contains(f, "no") {
			t.Errorf("components --release 4.18 shows cert-manager as available: %q", l)
		}
		// A release range is the RELEASE column's: no line after the
		// table repeats it.
		if strings.HasPrefix(l, "cert-manager: ") {
			t.Errorf("components --release 4.18 says why cert-manager is out after the table: %q", l)
		}
	}

	// The AVAILABLE column said after the table, as --output json says it:
	// a missing release file per arch, tags only.
	newestText := mustRun(t, "components")
	for n, c := range newest {
		for a, why := range c.Refused {
			if want := n + ": no on " + a + ": " + why + "\n"; c.Unavailable == "" && !strings.Contains(newestText, want) {
				t.Errorf("components does not say %q", want)
			}
		}
		if want := n + ": unpinned: "; c.AllowUnpinned && len(c.Refused) == 0 && !strings.Contains(newestText, want) {
			t.Errorf("components does not say %q", want)
		}
	}
	if !strings.Contains(newestText, ": no on ") || !strings.Contains(newestText, ": unpinned: ") {
		t.Errorf("components says why of no refused or unpinned component:\n%s", newestText)
	}
}

func TestReleaseList(t *testing.T) {
	var list []releaseJSON
	decodeStrict(t, "release list --output json", mustRun(t, "release", "list", "--output", "json"), &list)
	var streams []string
	for _, r := range list {
		streams = append(streams, r.Stream)
		if r.Source != "embedded" || r.Origin == "" {
			t.Errorf("release %s: source %q origin %q; want embedded with an origin", r.Stream, r.Source, r.Origin)
		}
		for _, a := range []string{"x86_64", "aarch64"} {
			if !strings.HasPrefix(r.Bases[a], r.Stream+".") {
				t.Errorf("release %s: %s base %q is not of the stream", r.Stream, a, r.Bases[a])
			}
		}
		if !slices.Contains(r.Files, "release-x86_64.json") || !slices.Contains(r.Files, "release-aarch64.json") {
			t.Errorf("release %s lacks a core file: %v", r.Stream, r.Files)
		}
	}
	if want := []string{"5.1", "5.0", "4.22", "4.21", "4.20", "4.19", "4.18", "4.17", "4.16", "4.15", "4.14"}; !slices.Equal(streams, want) {
		t.Errorf("release list streams = %v, want %v (newest first)", streams, want)
	}
	for _, r := range list {
		// What the release knowledge says of each.
		wantConfig := "/etc/microshift/config.d/10-microshift-compose.yaml"
		if versionLess(r.Stream, "4.19") {
			wantConfig = "/etc/microshift/config.yaml"
		}
		if r.ConfigFile != wantConfig || !strings.HasPrefix(r.Distro, "rhel-9.") || !strings.HasPrefix(r.Kubernetes, "1.") || r.Build != "redhat" {
			t.Errorf("release %s: config %q distro %q kubernetes %q", r.Stream, r.ConfigFile, r.Distro, r.Kubernetes)
		}
		// The embedded data are branch-head nightlies; the default distro
		// comes first, with its bootc base (none on RHEL 9.2, 4.14/4.15).
		if r.Kind != "nightly" || len(r.Distros) == 0 || r.Distros[0].Name != r.Distro || !r.Distros[0].Default ||
			(r.Distros[0].BootcBase == "") != versionLess(r.Stream, "4.16") {
			t.Errorf("release %s: kind %q distros %+v", r.Stream, r.Kind, r.Distros)
		}
	}

	dir := referenceDir(t, "release-4.18")
	list = nil
	decodeStrict(t, "release list --release-dir", mustRun(t, "release", "list", "--release-dir", dir, "-o", "json"), &list)
	if len(list) != 1 || list[0].Stream != "4.18" || list[0].Source != dir || len(list[0].Files) != 8 {
		t.Errorf("release list --release-dir %s = %+v, want the one 4.18 release with 8 files", dir, list)
	}

	text := mustRun(t, "release", "list")
	if lines := nonEmptyLines(text); len(lines) != 12 || !strings.HasPrefix(lines[1], "5.1     5.1.0    redhat  nightly  1.36        rhel-9.8,rhel-10.2 (bootc)  config.d     x86_64,aarch64  19     embedded (development, --release 5.1): ") ||
		!strings.HasPrefix(lines[2], "5.0     5.0.0    redhat  nightly  1.36        rhel-9.8,rhel-10.2 (bootc)  config.d ") || !strings.HasPrefix(lines[11], "4.14    4.14.0   redhat  nightly  1.27        rhel-9.2                    config.yaml") {
		t.Errorf("release list text:\n%s", text)
	}
}

func TestResolveExplain(t *testing.T) {
	out := mustRun(t, "resolve", "--profile", "storage-only", "--arch", "x86_64", "--explain")
	for _, want := range []string{
		"release 5.0 (embedded, base 5.0.0-",
		"arch x86_64, profile storage-only",
		"components, in apply order:",
		"000-core", "profile storage-only; required by storage-lvms",
		"010-storage-lvms  profile storage-only",
		"csi: storage-lvms",
		"needed by storage-lvms (release-x86_64.json lvms_operator)",
		"needed by core (release-x86_64.json pod)",
		"lvm2 any version (storage-lvms)",
		"microshift 5.0.* (core)",
		"MicroShift config /etc/microshift/config.d/10-microshift-compose.yaml:",
		`network.cniPlugin: "none" (networking-ovnk left out)`,
		`storage.optionalCsiComponents: ["none"] (snapshot-controller left out)`,
		"device files (1):",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("resolve --explain does not say %q:\n%s", want, out)
		}
	}
	// core comes before storage-lvms: apply order.
	if strings.Index(out, "000-core") > strings.Index(out, "010-storage-lvms") {
		t.Errorf("resolve --explain lists storage-lvms before core:\n%s", out)
	}
	for _, absent := range []string{"networking-ovnk  ", "ovn-kubernetes", "snapshot-controller  "} {
		if strings.Contains(out, absent) {
			t.Errorf("resolve --explain for storage-only mentions %q:\n%s", absent, out)
		}
	}

	short := mustRun(t, "resolve", "--profile", "storage-only", "--arch", "x86_64")
	if !strings.Contains(short, "7 images, 6 packages, 1 device files (--explain for details)") || !strings.Contains(short, "warning: no CNI: ") {
		t.Errorf("resolve without --explain:\n%s", short)
	}
}

// resolveLock returns the plan resolve --output json prints.
func resolveLock(t *testing.T, args ...string) plan.Plan {
	t.Helper()
	var p plan.Plan
	args = append([]string{"resolve", "--output", "json"}, args...)
	decodeStrict(t, strings.Join(args, " "), mustRun(t, args...), &p)
	return p
}

func TestResolveJSONIsTheLock(t *testing.T) {
	p := resolveLock(t, "--profile", "minimal", "--arch", "aarch64", "--with", "multus")
	if p.Schema != plan.Schema || p.Profile != "minimal" || p.Arch != "aarch64" || p.Release.Stream != "5.0" {
		t.Errorf("lock header = schema %d profile %q arch %q release %q", p.Schema, p.Profile, p.Arch, p.Release.Stream)
	}
	if got, want := p.ComponentNames(), []string{"core", "multus", "networking-ovnk"}; !slices.Equal(got, want) {
		t.Errorf("components = %v, want %v", got, want)
	}
	ovnk := p.Component("networking-ovnk")
	if ovnk == nil || len(ovnk.Reasons) == 0 || ovnk.Reasons[0].Kind != plan.ReasonRequired || ovnk.Reasons[0].By != "multus" {
		t.Errorf("networking-ovnk is not pulled in by multus: %+v", ovnk)
	}
	if !slices.Equal(p.With, []string{"multus"}) || p.Capabilities["cni"] != "networking-ovnk" {
		t.Errorf("with %v capabilities %v", p.With, p.Capabilities)
	}
	for _, im := range p.Images {
		if !im.Pinned || !strings.Contains(im.Ref, "@sha256:") || len(im.Uses) == 0 {
			t.Errorf("image %+v: want pinned by digest with a user", im)
		}
	}

	// build writes the same bytes as compose.lock.json.
	dir := t.TempDir() + "/out"
	mustRun(t, "build", "--profile", "minimal", "--arch", "aarch64", "--with", "multus", "--output", dir)
	lock := mustRun(t, "resolve", "--output", "json", "--profile", "minimal", "--arch", "aarch64", "--with", "multus")
	if got := snapshot(t, dir)["compose.lock.json"]; got != lock {
		t.Errorf("compose.lock.json differs from resolve --output json")
	}
}

func TestImagesEqualsPlan(t *testing.T) {
	p := resolveLock(t, "--profile", "full", "--arch", "aarch64")
	var want bytes.Buffer
	for _, ref := range p.ImageRefs() {
		want.WriteString(ref + "\n")
	}
	got := mustRun(t, "images", "--profile", "full", "--arch", "aarch64")
	if got != want.String() {
		t.Errorf("images --profile full --arch aarch64:\n%s\nwant the plan's images:\n%s", got, want.String())
	}
	lines := nonEmptyLines(got)
	if len(lines) == 0 || !slices.IsSorted(lines) || len(slices.Compact(slices.Clone(lines))) != len(lines) {
		t.Errorf("images output is empty, unsorted or has duplicates:\n%s", got)
	}
	for _, l := range lines {
		if !strings.Contains(l, "@sha256:") {
			t.Errorf("image %q is not pinned by digest", l)
		}
	}
	for _, key := range []string{"ovn-kubernetes-microshift", "lvms_operator"} {
		found := false
		for _, im := range p.Images {
			for _, u := range im.Uses {
				found = found || u.Key == key
			}
		}
		if !found {
			t.Errorf("full on aarch64 has no image for key %s", key)
		}
	}

	var images []plan.Image
	decodeStrict(t, "images --output json", mustRun(t, "images", "--profile", "full", "--arch", "aarch64", "-o", "json"), &images)
	if !reflect.DeepEqual(images, p.Images) {
		t.Errorf("images --output json differs from the plan's images")
	}

	// amd64 is accepted for x86_64.
	if a, b := mustRun(t, "images", "--profile", "networking-only", "--arch", "amd64"), mustRun(t, "images", "--profile", "networking-only", "--arch", "x86_64"); a != b {
		t.Errorf("images for amd64 and x86_64 differ")
	}
}

func TestValidate(t *testing.T) {
	out, stderr, code := runCLI(t, "validate")
	if code != exitOK {
		t.Fatalf("validate = exit %d: %s", code, stderr)
	}
	// The warnings are on stderr, one "warning:" line each naming its
	// check; stdout is the report alone.
	warnings := checkWarningStyle(t, stderr)
	const unpinned = `warning: release 5.0 (embedded): catalog and release files: release-ai-model-serving-x86_64.json: image "ovms-image" is not pinned by digest: quay.io/opendatahub/openvino_model_server:2025.1-release`
	if !slices.Contains(warnings, unpinned) {
		t.Errorf("validate's stderr lacks %q:\n%s", unpinned, stderr)
	}
	// A profile whose device never becomes healthy is no catalog problem:
	// its blueprint is still checked, and the refusal is a warning.
	const redBoot = "warning: release 4.18: profile minimal on aarch64: blueprint for rhel-9.4 edge-commit: build refuses it: release 4.18: the device never becomes healthy: no CNI: "
	if !slices.ContainsFunc(warnings, func(w string) bool {
		return strings.HasPrefix(w, redBoot) && strings.HasSuffix(w, "or pass --allow-red-boot to build a device that rolls back on every boot")
	}) {
		t.Errorf("validate's stderr lacks %q...:\n%s", redBoot, stderr)
	}
	if strings.Contains(out, "warning") && !strings.Contains(out, " warnings\n") {
		t.Errorf("validate prints warnings on stdout:\n%s", out)
	}
	lines := nonEmptyLines(out)
	oks := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "FAIL") {
			t.Errorf("validate reports a failure: %q", l)
		}
		if strings.HasPrefix(l, "ok ") {
			oks++
		}
	}
	for _, want := range []string{
		"ok   release 5.0 (embedded): catalog and release files",
		"ok   release 4.18 (embedded): catalog and release files",
		"ok   release 5.0: profile full on x86_64: blueprint for rhel-9.8 edge-commit",
		"ok   release 4.18: profile minimal on aarch64: blueprint for rhel-9.4 edge-commit",
		"skip release 4.14: profile minimal on x86_64: blueprint for rhel-9.2 edge-commit",
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("validate does not print %q:\n%s", want, out)
		}
	}
	// 11 releases x (catalog check + 4 profiles x 2 arches); 22 profiles
	// are ones their release cannot build (4.14-4.16: only full; 4.17: no
	// minimal or storage-only).
	if oks != 77 || lines[len(lines)-1] != fmt.Sprintf("99 checks (22 refused by their release), %d warnings", len(warnings)) {
		t.Errorf("validate printed %d ok lines, want 77, and %d warnings on stderr:\n%s", oks, len(warnings), out)
	}
	if len(lines) != 99+22+1 {
		t.Errorf("validate printed %d lines, want a line per check, a reason per refused one and the count:\n%s", len(lines), out)
	}

	var rep struct {
		Checks []struct {
			OK bool `json:"ok"`
		} `json:"checks"`
	}
	jsonOut, jsonErr, code := runCLI(t, "validate", "--output", "json")
	if err := json.Unmarshal([]byte(jsonOut), &rep); err != nil || code != exitOK {
		t.Fatalf("validate --output json = exit %d, %v", code, err)
	}
	if jsonErr != stderr {
		t.Errorf("validate --output json warns differently from validate:\n%s\nwant:\n%s", jsonErr, stderr)
	}
	if len(rep.Checks) != 99 {
		t.Errorf("validate --output json has %d checks, want 99", len(rep.Checks))
	}
	for i, c := range rep.Checks {
		if !c.OK {
			t.Errorf("validate --output json: check %d failed", i)
		}
	}

	dir := referenceDir(t, "release-4.18")
	out, stderr, _ = runCLI(t, "validate", "--release-dir", dir)
	checkWarningStyle(t, stderr)
	if !strings.Contains(out, "ok   release 4.18 ("+dir+"): catalog and release files") || strings.Contains(out, "FAIL") {
		t.Errorf("validate --release-dir %s:\n%s", dir, out)
	}
}

func TestVersion(t *testing.T) {
	out := mustRun(t, "version")
	if !strings.HasPrefix(out, "microshift-compose ") || strings.Count(out, "\n") != 1 || len(out) <= len("microshift-compose \n") {
		t.Errorf("version = %q, want one line \"microshift-compose <version>\"", out)
	}
}

// TestHelpIsNotAnError checks that asking for help prints it on stdout and
// exits 0, and that running the tool bare does too.
func TestHelpIsNotAnError(t *testing.T) {
	for _, args := range [][]string{nil, {"--help"}, {"build", "--help"}, {"release"}, {"help", "resolve"}} {
		stdout, stderr, code := runCLI(t, args...)
		if code != exitOK || stderr != "" || !strings.Contains(stdout, "Usage:") {
			t.Errorf("run(%q) = exit %d, stderr %q, stdout %d bytes with Usage: %v", args, code, stderr, len(stdout), strings.Contains(stdout, "Usage:"))
		}
	}
	// "help X" and "X --help" print the same.
	for _, cmd := range [][]string{{}, {"build"}, {"release", "list"}} {
		viaHelp := mustRun(t, append([]string{"help"}, cmd...)...)
		viaFlag := mustRun(t, append(slices.Clone(cmd), "--help")...)
		if viaHelp != viaFlag {
			t.Errorf("help %s differs from %s --help:\n%s\n---\n%s", strings.Join(cmd, " "), strings.Join(cmd, " "), viaHelp, viaFlag)
		}
	}
}
