package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/lockdiff"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
)

// copyReference copies an upstream release directory into a writable one.
func copyReference(t *testing.T, branch string) string {
	t.Helper()
	src := referenceDir(t, branch)
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func rebaseTestdata(t *testing.T, elem ...string) string {
	return filepath.Join(append([]string{root(t), "testdata", "rebase"}, elem...)...)
}

func readGolden(t *testing.T, elem ...string) string {
	t.Helper()
	data, err := os.ReadFile(rebaseTestdata(t, append([]string{"golden"}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestReleaseUpdateCommand runs the rebase of the 4.18 release files onto
// the next nightlies as a user would: the dry run prints the golden diff
// and writes nothing; the real run writes the golden files and says what
// it did; --output json says it to machines.
func TestReleaseUpdateCommand(t *testing.T) {
	dir := copyReference(t, "release-4.18")
	before := snapshot(t, dir)
	args := []string{"release", "update", dir,
		"--payload", "x86_64=" + rebaseTestdata(t, "payloads", "image-references-x86_64.json"),
		"--payload", "arm64=" + rebaseTestdata(t, "payloads", "release-info-aarch64.json")}

	diff := mustRun(t, append(args, "--dry-run")...)
	if want := strings.ReplaceAll(readGolden(t, "payload-4.18.diff"), "DIR", dir); diff != want {
		t.Errorf("--dry-run printed:\n%s\nwant the golden diff:\n%s", diff, want)
	}
	if d := diffSnapshots(before, snapshot(t, dir)); d != "" {
		t.Fatalf("--dry-run wrote: %s", d)
	}

	out := mustRun(t, args...)
	want := `release-aarch64.json: 7 images updated, release.base 4.18.0-0.nightly-arm64-2026-08-12-180320 -> 4.18.0-0.nightly-arm64-2026-09-02-094512 (not in the source, kept: lvms_operator)
release-multus-aarch64.json: 2 images updated, release.base 4.18.0-0.nightly-arm64-2026-08-12-180320 -> 4.18.0-0.nightly-arm64-2026-09-02-094512
release-multus-x86_64.json: 2 images updated, release.base 4.18.0-0.nightly-2026-08-12-221652 -> 4.18.0-0.nightly-2026-09-02-101010
release-olm-aarch64.json: 3 images updated, release.base 4.18.0-0.nightly-arm64-2026-08-12-180320 -> 4.18.0-0.nightly-arm64-2026-09-02-094512
release-olm-x86_64.json: 3 images updated, release.base 4.18.0-0.nightly-2026-08-12-221652 -> 4.18.0-0.nightly-2026-09-02-101010
release-x86_64.json: 7 images updated, release.base 4.18.0-0.nightly-2026-08-12-221652 -> 4.18.0-0.nightly-2026-09-02-101010 (not in the source, kept: lvms_operator)
wrote 6 files in ` + dir + "\n"
	if out != want {
		t.Errorf("release update printed:\n%s\nwant:\n%s", out, want)
	}
	after := snapshot(t, dir)
	for n, data := range after {
		if before[n] == data {
			continue
		}
		if g := readGolden(t, "payload-4.18", n); data != g {
			t.Errorf("%s differs from testdata/rebase/golden/payload-4.18/%s", n, n)
		}
	}
	// The files still build.
	mustRun(t, "build", "--profile", "full", "--arch", "aarch64", "--release-dir", dir, "--output", filepath.Join(t.TempDir(), "out"))

	// Again, as JSON: nothing left to change.
	var j struct {
		Dir      string               `json:"dir"`
		Files    []*rebase.FileUpdate `json:"files"`
		Warnings []string             `json:"warnings"`
		DryRun   bool                 `json:"dry_run"`
		Written  int                  `json:"written"`
		Diff     string               `json:"diff"`
	}
	decodeStrict(t, "release update --output json", mustRun(t, append(args, "-o", "json")...), &j)
	if j.Dir != dir || len(j.Files) != 6 || j.Written != 0 || j.DryRun || j.Diff != "" {
		t.Errorf("release update --output json = %+v", j)
	}
	for _, f := range j.Files {
		if len(f.Changes) != 0 || f.OldBase != f.NewBase {
			t.Errorf("second update changes %s: %+v", f.Name, f)
		}
	}
}

// TestReleaseUpdateReadOnly: a read-only release file fails the update with
// one line, exit 1, and no file of the directory changed.
func TestReleaseUpdateReadOnly(t *testing.T) {
	dir := copyReference(t, "release-4.18")
	ro := filepath.Join(dir, "release-olm-x86_64.json")
	if err := os.Chmod(ro, 0o444); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	stdout, stderr, code := runCLI(t, "release", "update", dir, "--payload", "x86_64="+rebaseTestdata(t, "payloads", "image-references-x86_64.yaml"))
	if want := "error: " + ro + ": file is read-only (mode 0444); make it writable (chmod u+w) to update it\n"; stderr != want || code != exitError || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, want)
	}
	if d := diffSnapshots(before, snapshot(t, dir)); d != "" {
		t.Errorf("a failed update changed the directory: %s", d)
	}
}

func pushTestImage(t *testing.T, ref, goarch string) string {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", goarch
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	r, _ := name.ParseReference(ref)
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	return r.Context().Name() + "@" + d.String()
}

func pushTestIndex(t *testing.T, ref string) string {
	t.Helper()
	idx := v1.ImageIndex(empty.Index)
	for _, a := range []string{"amd64", "arm64"} {
		img, _ := random.Image(256, 1)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: a}}})
	}
	r, _ := name.ParseReference(ref)
	if err := remote.WriteIndex(r, idx); err != nil {
		t.Fatal(err)
	}
	d, _ := idx.Digest()
	return r.Context().Name() + "@" + d.String()
}

func writeReleaseFile(t *testing.T, dir, fileName string, images ...string) {
	t.Helper()
	f := &releases.File{Name: fileName, Base: "4.19.0"}
	for _, kv := range images {
		k, v, _ := strings.Cut(kv, "=")
		f.Images = append(f.Images, releases.Image{Key: k, Ref: v})
	}
	if err := os.WriteFile(filepath.Join(dir, fileName), f.Encode(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReleaseVerifyAndResolveCommands drive the registry commands against a
// real docker-registry: update --resolve-tags pins the tags, verify passes,
// then fails with exit 1 once an image is deleted.
func TestReleaseVerifyAndResolveCommands(t *testing.T) {
	reg := testutil.StartRegistry(t)
	h := reg.Host
	agent := pushTestImage(t, h+"/edge/agent:v1", "amd64")
	multi := pushTestIndex(t, h+"/edge/multi:v1")
	dir := t.TempDir()
	writeReleaseFile(t, dir, "release-x86_64.json", "agent="+h+"/edge/agent:v1", "multi="+h+"/edge/multi:v1")

	out := mustRun(t, "release", "update", dir, "--resolve-tags", "--index-digest", "--jobs", "2")
	if out != "release-x86_64.json: 2 images updated\nwrote 1 file in "+dir+"\n" {
		t.Errorf("release update --resolve-tags printed %q", out)
	}

	table := mustRun(t, "release", "verify", dir)
	lines := nonEmptyLines(table)
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "RESULT") || !strings.HasPrefix(lines[1], "ok ") || !strings.HasPrefix(lines[2], "ok ") ||
		lines[3] != "release 4.19 ("+dir+"): 2 images in 1 file: 2 ok, 0 failed" {
		t.Errorf("release verify printed:\n%s", table)
	}
	if !strings.Contains(lines[1], releases.ShortRef(agent)) || !strings.Contains(lines[2], "index, linux/amd64 sha256:") {
		t.Errorf("release verify lines:\n%s", table)
	}

	deleteRef, _ := name.NewDigest(agent)
	if err := remote.Delete(deleteRef); err != nil {
		t.Fatal(err)
	}
	writeReleaseFile(t, dir, "release-aarch64.json", "multi="+multi, "tagged="+h+"/edge/agent:v1")
	stdout, stderr, code := runCLI(t, "release", "verify", dir, "--output", "json")
	if code != exitError || stderr != "error: 2 of 4 images failed verification (1 not-found, 1 unpinned)\n" {
		t.Errorf("release verify after deleting an image: exit %d, stderr %q", code, stderr)
	}
	var j verifyJSON
	decodeStrict(t, "release verify --output json", stdout, &j)
	if j.Source != "release 4.19 ("+dir+")" || j.Summary.Images != 4 || j.Summary.Failed != 2 || j.Summary.Files != 2 || len(j.Images) != 4 {
		t.Fatalf("release verify --output json = %+v", j)
	}
	for _, c := range j.Images {
		switch c.Key {
		case "agent":
			if c.OK || c.Reason != rebase.ReasonNotFound || c.Message != "manifest not found (404): manifest unknown" {
				t.Errorf("deleted image: %+v", c)
			}
		case "tagged":
			if c.OK || c.Reason != rebase.ReasonUnpinned {
				t.Errorf("tag: %+v", c)
			}
		default:
			if !c.OK {
				t.Errorf("%s %s: %+v", c.File, c.Key, c)
			}
		}
	}
	// --arch narrows the check to the files of one arch.
	stdout, stderr, code = runCLI(t, "release", "verify", dir, "--arch", "aarch64", "--component", "core")
	if code != exitError || stderr != "error: 1 of 2 images failed verification (1 unpinned)\n" || !strings.Contains(stdout, ": 2 images in 1 file: 1 ok, 1 failed\n") {
		t.Errorf("verify --arch aarch64: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
}

// TestReleaseDiffCommand: the embedded releases as Markdown (the golden the
// package test checks) and JSON, and a directory against an embedded version.
func TestReleaseDiffCommand(t *testing.T) {
	if got := mustRun(t, "release", "diff", "4.18", "5.0"); got != readGolden(t, "release-diff-4.18-5.0.md") {
		t.Errorf("release diff 4.18 5.0 differs from testdata/rebase/golden/release-diff-4.18-5.0.md:\n%s", got)
	}
	var d rebase.ReleaseDiff
	decodeStrict(t, "release diff --output json", mustRun(t, "release", "diff", "4.18", "5.0", "-o", "json"), &d)
	if d.Old.Label != "4.18 (embedded)" || d.New.Version != "5.0.0" || d.Summary.Added != 60 {
		t.Errorf("release diff --output json = %+v", d.Summary)
	}
	dir := referenceDir(t, "release-4.18")
	if got := mustRun(t, "release", "diff", dir, "4.18"); !strings.Contains(got, "No image changes.") {
		t.Errorf("release diff of the 4.18 directory and the embedded 4.18:\n%s", got)
	}
}

// TestReleaseImportCommand adds the 4.18 directory to a data directory:
// the bundle equals the embedded one; a second import is refused; --force
// after an update replaces it and says what changed.
func TestReleaseImportCommand(t *testing.T) {
	data := t.TempDir()
	src := copyReference(t, "release-4.18")
	origin := "openshift/microshift release-4.18 at 8eb6c2962b3a (assets/**/release*.json)"
	out := mustRun(t, "release", "import", src, "--origin", origin, "--data-dir", data)
	want := "wrote " + data + "/4.18.json: release 4.18.0 (stream 4.18), 8 files, 42 images\n" +
		"  x86_64 base 4.18.0-0.nightly-2026-08-12-221652\n  aarch64 base 4.18.0-0.nightly-arm64-2026-08-12-180320\n" +
		"  origin \"" + origin + "\"\nreview the file, then rebuild to embed it\n"
	if out != want {
		t.Errorf("release import printed:\n%s\nwant:\n%s", out, want)
	}
	got, _ := os.ReadFile(filepath.Join(data, "4.18.json"))
	embedded, _ := os.ReadFile(filepath.Join(root(t), "releases", "data", "4.18.json"))
	if string(got) != string(embedded) {
		t.Errorf("imported bundle differs from releases/data/4.18.json")
	}
	if out := mustRun(t, "release", "import", src, "--origin", origin, "--data-dir", data); !strings.Contains(out, "is already up to date") {
		t.Errorf("second import printed %q", out)
	}
	mustRun(t, "release", "update", src, "--payload", "x86_64="+rebaseTestdata(t, "payloads", "image-references-x86_64.json"))
	_, stderr, code := runCLI(t, "release", "import", src, "--origin", "openshift/microshift at 0123456789ab", "--data-dir", data)
	if code != exitError || !strings.HasSuffix(stderr, ": release bundle already exists; pass --force to replace it\n") {
		t.Errorf("import over an existing bundle: exit %d, %q", code, stderr)
	}
	out = mustRun(t, "release", "import", src, "--origin", "openshift/microshift at 0123456789ab", "--data-dir", data, "--force")
	if !strings.HasPrefix(out, "replaced "+data+"/4.18.json") || !strings.Contains(out, "changes from the previous bundle: 0 images added, 0 removed, 12 re-digested, 0 otherwise changed, 3 release.base changes") {
		t.Errorf("import --force printed:\n%s", out)
	}
}

// TestDiffCommand compares two builds by their output directories.
func TestDiffCommand(t *testing.T) {
	work := t.TempDir()
	a, b := filepath.Join(work, "a"), filepath.Join(work, "b")
	mustRun(t, "build", "--profile", "networking-only", "--arch", "x86_64", "--with", "low-latency", "--output", a)
	mustRun(t, "build", "--profile", "networking-only", "--arch", "x86_64", "--with", "multus", "--output", b)
	md := mustRun(t, "diff", a, filepath.Join(b, "compose.lock.json"))
	for _, want := range []string{"- added `multus` (--with)", "- removed `low-latency`", "| multus | `multus-cni-microshift` | added |"} {
		if !strings.Contains(md, want) {
			t.Errorf("diff does not say %q:\n%s", want, md)
		}
	}
	var d lockdiff.Diff
	decodeStrict(t, "diff --output json", mustRun(t, "diff", a, b, "-o", "json"), &d)
	if len(d.ComponentsAdded) != 1 || len(d.ComponentsRemoved) != 1 || d.ImageCount.New <= d.ImageCount.Old {
		t.Errorf("diff --output json = %+v", d)
	}
	if out := mustRun(t, "diff", a, a); !strings.HasSuffix(out, "No changes.\n") {
		t.Errorf("diff of a build with itself:\n%s", out)
	}
}
