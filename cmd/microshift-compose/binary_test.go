package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
)

// buildTags are the tags osbuild/images needs for a CGO-free build (the
// Makefile's TAGS).
const buildTags = "containers_image_openpgp,exclude_graphdriver_btrfs,exclude_graphdriver_devicemapper"

// buildBinary compiles the command the way `make build` does, once for
// all the tests that run it.
func buildBinary(t *testing.T) string {
	t.Helper()
	return e2eBinary(t)
}

type result struct {
	stdout, stderr string
	code           int
}

// runBinary runs the binary in dir and returns its output and exit code.
func runBinary(t *testing.T, bin, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s %q: %v", bin, args, err)
	}
	return result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

func mustRunBinary(t *testing.T, bin, dir string, args ...string) string {
	t.Helper()
	r := runBinary(t, bin, dir, args...)
	if r.code != 0 || withoutStreamPinWarning(r.stderr) != "" {
		t.Fatalf("microshift-compose %s: exit %d, stderr:\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

// checkOutputDir checks a build's output directory: the files of the
// contract, digest-pinned images, a lock that parses and agrees with them,
// and a blueprint with one container per image.
func checkOutputDir(t *testing.T, dir, profile, arch, stream string) plan.Plan {
	t.Helper()
	read := func(name string) []byte {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("build output: %v", err)
		}
		return data
	}
	var p plan.Plan
	if err := json.Unmarshal(read("compose.lock.json"), &p); err != nil {
		t.Fatalf("%s/compose.lock.json does not parse: %v", dir, err)
	}
	if p.Profile != profile || p.Arch != arch || p.Release.Stream != stream {
		t.Errorf("%s: lock says profile %q arch %q release %q, want %q %q %q", dir, p.Profile, p.Arch, p.Release.Stream, profile, arch, stream)
	}
	images := nonEmptyLines(string(read("images.txt")))
	if len(images) == 0 {
		t.Errorf("%s/images.txt is empty", dir)
	}
	for _, l := range images {
		if !strings.Contains(l, "@sha256:") {
			t.Errorf("%s/images.txt: %q is not pinned by digest", dir, l)
		}
	}
	if !slices.Equal(images, p.ImageRefs()) {
		t.Errorf("%s/images.txt differs from the lock's images", dir)
	}
	var bp struct {
		Name       string `toml:"name"`
		Containers []struct {
			Source string `toml:"source"`
		} `toml:"containers"`
		Packages []struct {
			Name    string `toml:"name"`
			Version string `toml:"version"`
		} `toml:"packages"`
	}
	if _, err := toml.Decode(string(read("blueprint.toml")), &bp); err != nil {
		t.Fatalf("%s/blueprint.toml does not parse: %v", dir, err)
	}
	var sources []string
	for _, c := range bp.Containers {
		sources = append(sources, c.Source)
	}
	if !slices.Equal(sources, images) {
		t.Errorf("%s/blueprint.toml containers %v, want images.txt %v", dir, sources, images)
	}
	pinned := false
	for _, pkg := range bp.Packages {
		pinned = pinned || (pkg.Name == "microshift" && pkg.Version == stream+".*")
	}
	if !pinned {
		t.Errorf("%s/blueprint.toml does not pin microshift to %s.*: %+v", dir, stream, bp.Packages)
	}
	// The config file the lock names is in the output, at its device path.
	if p.ConfigFile != "" {
		if cfg := string(read(output.Path(p.ConfigFile))); !strings.Contains(cfg, "# MicroShift config for profile") {
			t.Errorf("%s/%s is not the plan's MicroShift config:\n%s", dir, output.Path(p.ConfigFile), cfg)
		}
	}
	return p
}

// TestBinaryREADME builds the real binary and runs the commands of "What
// it does" (the README's, in full in docs/composition.md) as a user would,
// from a working directory of their own.
func TestBinaryREADME(t *testing.T) {
	bin := buildBinary(t)
	work := t.TempDir()

	out := mustRunBinary(t, bin, work, "build", "--profile", "full", "--arch", "x86_64", "--output", "out/")
	if !strings.HasPrefix(out, "wrote out/: profile full, release 5.0, x86_64: 4 components, ") {
		t.Errorf("build printed %q", out)
	}
	full := checkOutputDir(t, filepath.Join(work, "out"), "full", "x86_64", "5.0")
	if got := full.ComponentNames(); !slices.Equal(got, []string{"core", "networking-ovnk", "storage-lvms", "snapshot-controller"}) {
		t.Errorf("full selects %v", got)
	}

	mustRunBinary(t, bin, work, "build", "--profile", "minimal", "--arch", "aarch64", "--with", "multus", "--output", "out-min/")
	minPlan := checkOutputDir(t, filepath.Join(work, "out-min"), "minimal", "aarch64", "5.0")
	if minPlan.Component("multus") == nil || minPlan.Component("networking-ovnk") == nil {
		t.Errorf("minimal --with multus selects %v; want multus and its cni provider", minPlan.ComponentNames())
	}

	explain := mustRunBinary(t, bin, work, "resolve", "--profile", "storage-only", "--explain")
	for _, want := range []string{"000-core", "010-storage-lvms", "profile storage-only", "lvms_operator", `network.cniPlugin: "none" (networking-ovnk left out)`} {
		if !strings.Contains(explain, want) {
			t.Errorf("resolve --explain does not say %q:\n%s", want, explain)
		}
	}

	images := nonEmptyLines(mustRunBinary(t, bin, work, "images", "--profile", "full", "--arch", "aarch64"))
	if len(images) == 0 || !slices.IsSorted(images) {
		t.Errorf("images --profile full --arch aarch64 is empty or unsorted: %v", images)
	}
	for _, l := range images {
		if !strings.Contains(l, "@sha256:") {
			t.Errorf("images: %q is not pinned by digest", l)
		}
	}

	profiles := mustRunBinary(t, bin, work, "profiles")
	for _, p := range []string{"minimal", "networking-only", "storage-only", "full"} {
		if !strings.Contains(profiles, "\n"+p+" ") {
			t.Errorf("profiles does not list %s:\n%s", p, profiles)
		}
	}
	var comps []componentJSON
	if err := json.Unmarshal([]byte(mustRunBinary(t, bin, work, "components", "--output", "json")), &comps); err != nil || len(comps) < 14 {
		t.Errorf("components --output json: %d components, %v", len(comps), err)
	}

	// The flat layout the microshift-release-info RPMs install, from the
	// real upstream files; the second build replaces the first output.
	for _, tc := range []struct{ dir, stream string }{{"release-4.14", "4.14"}, {"release-4.18", "4.18"}, {"main", "5.0"}} {
		dir := referenceDir(t, tc.dir)
		mustRunBinary(t, bin, work, "build", "--profile", "full", "--release-dir", dir, "--output", "out/")
		p := checkOutputDir(t, filepath.Join(work, "out"), "full", hostArch(), tc.stream)
		if p.Release.Source != dir {
			t.Errorf("--release-dir %s: lock release source %q", dir, p.Release.Source)
		}
	}
	if l := leftovers(t, work); len(l) > 0 {
		t.Errorf("builds left temporary directories: %v", l)
	}

	validate := runBinary(t, bin, work, "validate")
	if validate.code != 0 || !strings.Contains(validate.stdout, "ok   release 5.0 (embedded): catalog and release files") || strings.Contains(validate.stdout, "FAIL") {
		t.Errorf("validate: exit %d\n%s", validate.code, validate.stdout)
	}
	checkWarningStyle(t, validate.stderr)

	// A failing command: exit 1, one line on stderr, nothing written.
	r := runBinary(t, bin, work, "build", "--profile", "ful", "--arch", "x86_64", "--output", "out-bad/")
	if r.code != 1 || r.stderr != "error: unknown profile \"ful\"; did you mean \"full\"?\n" || r.stdout != "" {
		t.Errorf("build --profile ful: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(work, "out-bad")); !os.IsNotExist(err) {
		t.Errorf("a failed build created out-bad/: %v", err)
	}
	// A usage error: exit 2.
	r = runBinary(t, bin, work, "build", "--profile", "full", "--arch", "x86_64")
	if r.code != 2 || r.stderr != "error: --output DIR is required\n" {
		t.Errorf("build without --output: exit %d, stderr %q", r.code, r.stderr)
	}

	help := mustRunBinary(t, bin, work, "build", "--help")
	for _, want := range []string{"blueprint.toml", "images.txt", "compose.lock.json", "config.d/", "--output", "--profile"} {
		if !strings.Contains(help, want) {
			t.Errorf("build --help does not mention %s:\n%s", want, help)
		}
	}
}
