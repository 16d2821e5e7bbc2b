package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
)

// coreKeys are the keys of the core release file the embedded catalog
// claims, with the component that claims each.
var coreKeys = map[string]string{
	"cli": "core", "coredns": "core", "haproxy-router": "core", "kube-rbac-proxy": "core", "pod": "core", "service-ca-operator": "core",
	"ovn-kubernetes-microshift": "networking-ovnk", "lvms_operator": "storage-lvms", "csi-snapshot-controller": "snapshot-controller",
}

// syntheticRelease pushes an image for every key of the core release file
// to a real docker-registry (indexes with amd64 and arm64 for some, base
// layers shared between images and between components) and writes a
// release directory pointing at them, for the embedded catalog.
func syntheticRelease(t *testing.T) (host, dir string) {
	t.Helper()
	reg := testutil.StartRegistry(t)
	return reg.Host, pushRelease(t, &testutil.Pusher{Host: reg.Host}, false)
}

// pushRelease pushes the synthetic release with p (Docker media types with
// docker, as OpenShift's images have) and writes its release directory.
func pushRelease(t *testing.T, p *testutil.Pusher, docker bool) (dir string) {
	t.Helper()
	base := testutil.NewLayer(1, 96<<10)
	baseArm := testutil.NewLayer(2, 80<<10)
	images := map[string]string{}
	seed := uint64(10)
	for _, key := range slices.Sorted(maps.Keys(coreKeys)) {
		seed++
		own := testutil.NewLayer(seed, int64(8<<10+seed*512))
		path := "openshift-release-dev/ocp-v5.0-art-dev"
		if coreKeys[key] == "storage-lvms" {
			path = "lvms4/lvms-rhel9-operator"
		}
		var ref string
		var err error
		layers := map[string][]testutil.Layer{"amd64": {base, own}, "arm64": {baseArm, testutil.NewLayer(seed+1000, 4096)}}
		switch {
		case seed%2 == 0 && docker:
			ref, _, err = p.PushDockerIndex(path, []string{"amd64", "arm64"}, layers)
		case seed%2 == 0:
			ref, _, err = p.PushIndex(path, []string{"amd64", "arm64"}, layers)
		case docker:
			ref, err = p.PushDockerImage(path, "amd64", []testutil.Layer{base, own})
		default:
			ref, err = p.PushImage(path, "amd64", []testutil.Layer{base, own})
		}
		if err != nil {
			t.Fatal(err)
		}
		images[key] = ref
	}
	dir = t.TempDir()
	data, err := json.MarshalIndent(map[string]any{"release": map[string]string{"base": "5.0.0-0.test-2026-11-22"}, "images": images}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "release-x86_64.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMirrorFootprintBootcFlow runs docs/airgap.md's flow against a real
// registry: build --bootc, mirror the lock into the output's images/, check
// every image the Containerfile loads is in the layout (with skopeo, as the
// Containerfile does), then footprint and build --resolve-sizes.
func TestMirrorFootprintBootcFlow(t *testing.T) {
	_, rel := syntheticRelease(t)
	work := t.TempDir()
	out := filepath.Join(work, "out")
	sel := []string{"--profile", "full", "--arch", "x86_64", "--release-dir", rel}

	mustRun(t, append([]string{"build", "--bootc", "--output", out}, sel...)...)
	if _, err := os.Stat(filepath.Join(out, "Containerfile")); err != nil {
		t.Fatalf("build --bootc wrote no Containerfile: %v", err)
	}
	lock := filepath.Join(out, "compose.lock.json")
	if strings.Contains(string(mustReadFile(t, lock)), `"footprint"`) {
		t.Errorf("build without --resolve-sizes wrote a footprint section")
	}

	// Progress: one plain line per image on a non-terminal stderr.
	images := filepath.Join(out, "images")
	stdout, stderr, code := runCLI(t, "mirror", "--lock", lock, "--to", "dir:"+images)
	if code != 0 {
		t.Fatalf("mirror --lock: exit %d: %s", code, stderr)
	}
	summary := regexp.MustCompile(`^mirrored 9 images \(\d+ blobs, \d+ manifests\) to dir:` + regexp.QuoteMeta(images) + `: [0-9.]+ KiB fetched, 0 B already present, in [0-9.]+s\n$`)
	if !summary.MatchString(stdout) {
		t.Errorf("mirror summary = %q", stdout)
	}
	if lines := nonEmptyLines(stderr); len(lines) != 9 || !strings.HasPrefix(lines[0], "mirror: [1/9] 127.0.0.1:") {
		t.Errorf("mirror progress on a non-terminal stderr = %q, want 9 plain lines", stderr)
	}
	// The Containerfile's check: every reference of images.txt has its dir:
	// directory (and, the layout being an OCI layout too, its index entry).
	for _, ref := range nonEmptyLines(string(mustReadFile(t, filepath.Join(out, "images.txt")))) {
		runSkopeo(t, "inspect", "--raw", "dir:"+filepath.Join(images, airgap.DirName(ref)))
		runSkopeo(t, "inspect", "--raw", "oci:"+images+":"+ref)
	}
	// A rerun with --quiet prints only the summary, and fetches nothing.
	stdout = mustRun(t, "mirror", "--lock", lock, "--quiet", "--to", "dir:"+images)
	if !strings.Contains(stdout, ": 0 B fetched, ") {
		t.Errorf("mirror rerun summary = %q, want nothing fetched", stdout)
	}
	var sum struct {
		Images  int   `json:"images"`
		Fetched int64 `json:"bytes_fetched"`
		Skipped int64 `json:"bytes_skipped"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "mirror", "--lock", lock, "-q", "-o", "json", "--to", "dir:"+images)), &sum); err != nil || sum.Images != 9 || sum.Fetched != 0 || sum.Skipped == 0 {
		t.Errorf("mirror --output json = %+v, %v", sum, err)
	}

	// footprint: JSON for two profiles, agreeing with build --resolve-sizes.
	var fps []footprintJSON
	decodeStrict(t, "footprint", mustRun(t, "footprint", "--profile", "networking-only", "--profile", "full", "--arch", "x86_64", "--release-dir", rel, "-o", "json"), &fps)
	if len(fps) != 2 || fps[0].Profile != "networking-only" || fps[1].Profile != "full" {
		t.Fatalf("footprint: %+v", fps)
	}
	full := fps[1].Footprint
	if full.Total.Images != 9 || len(full.Components) != 4 || full.SharedBetweenComponents == 0 || full.Total.Unique >= full.Total.Compressed {
		t.Errorf("footprint of full = %+v", full)
	}
	if fps[0].Footprint.Total.Images != 7 || fps[0].Footprint.Total.Unique >= full.Total.Unique {
		t.Errorf("footprint of networking-only = %+v", fps[0].Footprint.Total)
	}
	text := mustRun(t, "footprint", "--profile", "full", "--arch", "x86_64", "--release-dir", rel)
	for _, want := range []string{
		`^profile full, release 5\.0, x86_64: 9 images, compressed bytes$`,
		`^COMPONENT\s+IMAGES\s+COMPRESSED\s+UNIQUE$`,
		`^core\s+6\s+[0-9.]+ KiB\s+[0-9.]+ KiB$`,
		`^storage-lvms\s+1\s+[0-9.]+ KiB\s+[0-9.]+ KiB$`,
		`^shared between components\s+[0-9.]+ KiB$`,
		`^total\s+9\s+[0-9.]+ [KM]iB\s+[0-9.]+ KiB$`,
	} {
		if !regexp.MustCompile("(?m)" + want).MatchString(text) {
			t.Errorf("footprint text has no line matching %s:\n%s", want, text)
		}
	}
	cmp := mustRun(t, "footprint", "--profile", "networking-only", "--profile", "full", "--arch", "x86_64", "--release-dir", rel)
	if !regexp.MustCompile(`(?m)^COMPONENT\s+NETWORKING-ONLY\s+FULL$`).MatchString(cmp) || !regexp.MustCompile(`(?m)^storage-lvms\s+-\s+[0-9.]+ KiB$`).MatchString(cmp) {
		t.Errorf("footprint comparison:\n%s", cmp)
	}

	out2 := filepath.Join(work, "out2")
	mustRun(t, append([]string{"build", "--resolve-sizes", "--output", out2}, sel...)...)
	var p plan.Plan
	if err := json.Unmarshal(mustReadFile(t, filepath.Join(out2, "compose.lock.json")), &p); err != nil {
		t.Fatal(err)
	}
	if p.Footprint == nil || fmt.Sprint(*p.Footprint) != fmt.Sprint(*full) {
		t.Errorf("build --resolve-sizes footprint = %+v, want footprint's %+v", p.Footprint, full)
	}
	// The rest of the lock is what build writes without the flag.
	p.Footprint = nil
	var plain plan.Plan
	if err := json.Unmarshal(mustReadFile(t, lock), &plain); err != nil {
		t.Fatal(err)
	}
	// The footprint section is output: it is in the composition ID.
	if p.ID == plain.ID || p.ID == "" {
		t.Errorf("build --resolve-sizes: composition ID %q, without it %q: want different IDs", p.ID, plain.ID)
	}
	p.ID = plain.ID
	if fmt.Sprint(p) != fmt.Sprint(plain) {
		t.Errorf("build --resolve-sizes changed more of the lock than the footprint section and the ID")
	}
}

// TestMirrorFailureExit mirrors a plan with an image the registry does not
// have: exit 1, one line naming it, the other images still mirrored.
func TestMirrorFailureExit(t *testing.T) {
	host, rel := syntheticRelease(t)
	path := filepath.Join(rel, "release-x86_64.json")
	data := string(mustReadFile(t, path))
	missing := host + "/openshift-release-dev/ocp-v5.0-art-dev@sha256:" + strings.Repeat("0", 64)
	data = regexp.MustCompile(`"pod": "[^"]+"`).ReplaceAllString(data, `"pod": "`+missing+`"`)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "images")
	stdout, stderr, code := runCLI(t, "mirror", "--profile", "minimal", "--arch", "x86_64", "--release-dir", rel, "--quiet", "--to", "oci:"+dir)
	want := "error: mirroring to oci:" + dir + ": " + missing + ": not found in the registry (404 Not Found): check the reference in the release file\n"
	if code != exitError || stderr != want || stdout != "" {
		t.Errorf("mirror with a missing image: exit %d, stdout %q, stderr\n  %q\nwant\n  %q", code, stdout, stderr, want)
	}
	idx := string(mustReadFile(t, filepath.Join(dir, "index.json")))
	if n := strings.Count(idx, `"org.opencontainers.image.ref.name"`); n != 5 {
		t.Errorf("index.json has %d images, want the 5 that exist", n)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func runSkopeo(t *testing.T, args ...string) {
	t.Helper()
	bin := testutil.NeedTool(t, "skopeo", "skopeo")
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Errorf("skopeo %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func TestProgressNames(t *testing.T) {
	for _, tc := range []struct{ ref, want string }{
		{"quay.io/openshift-release-dev/ocp-v5.0-art-dev@sha256:45188944bb589e9b3fd88bd175a18b9414a2ba070e2a08a3964e22ceedaf2955", "ocp-v5.0-art-dev@sha256:45188944bb58"},
		{"registry.redhat.io/ubi9/ubi-minimal:latest", "ubi-minimal:latest"},
		{"127.0.0.1:5000/a/very-long-repository-name-that-goes-on-and-on@sha256:0123456789abcdef", "very-long-repository-name-that-goes-on-…"},
	} {
		if got := shorten(tc.ref, 40); got != tc.want {
			t.Errorf("shorten(%q) = %q, want %q", tc.ref, got, tc.want)
		}
	}
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1536, "1.5 KiB"}, {5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}} {
		if got := humanBytes(tc.n); got != tc.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
