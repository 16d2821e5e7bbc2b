package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/matrix"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

var updateGolden = os.Getenv("UPDATE_GOLDEN") != ""

// cliGolden compares output with testdata/golden/cli/<name>
// (UPDATE_GOLDEN=1 go test ./cmd/microshift-compose -run Matrix|BuildFormat
// rewrites it).
func cliGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join(root(t), "testdata", "golden", "cli", name), got, updateGolden,
		"UPDATE_GOLDEN=1 go test ./cmd/microshift-compose -run 'Matrix|BuildFormat'")
}

// runWarned runs a command that must succeed with nothing on stderr but
// "warning: " lines.
func runWarned(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, code := runCLI(t, args...)
	if code != exitOK {
		t.Fatalf("run(%q) = exit %d, stderr %q", args, code, stderr)
	}
	for _, l := range nonEmptyLines(stderr) {
		if !strings.HasPrefix(l, "warning: ") {
			t.Fatalf("run(%q): stderr line %q is no warning", args, l)
		}
	}
	return stdout
}

// TestBuildFormatJSON: build --format json prints the summary: the
// composition ID the lock holds, every file written with its sha256, the
// counts; --output 'DIR/{id}' names the directory after the ID.
func TestBuildFormatJSON(t *testing.T) {
	parent := t.TempDir()
	stdout := runWarned(t, "build", "--profile", "storage-only", "--arch", "aarch64", "--release", "4.19", "--output", filepath.Join(parent, "{id}"), "--format", "json")
	var s assemble.Summary
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("build --format json printed no summary: %v\n%s", err, stdout)
	}
	if s.Output != filepath.Join(parent, s.ID) {
		t.Errorf("output %s, want %s/<id>", s.Output, parent)
	}
	lock, err := lockfile.Load(filepath.Join(s.Output, output.LockFile))
	if err != nil {
		t.Fatal(err)
	}
	if lock.ID != s.ID || len(s.ID) != 64 {
		t.Errorf("summary id %q, lock id %q", s.ID, lock.ID)
	}
	for _, f := range s.Files {
		data, err := os.ReadFile(filepath.Join(s.Output, filepath.FromSlash(f.Path)))
		if err != nil || sha256Hex(data) != f.SHA256 || len(data) != f.Size {
			t.Errorf("%s: sha256 %s size %d in the summary, on disk %s (%v)", f.Path, f.SHA256, f.Size, sha256Hex(data), err)
		}
	}
	cliGolden(t, "build-summary.json", []byte(strings.ReplaceAll(stdout, parent, "{out}")))

	// The text form names the short ID.
	text := runWarned(t, "build", "--profile", "storage-only", "--arch", "aarch64", "--release", "4.19", "--output", filepath.Join(parent, "text"))
	if !strings.HasSuffix(text, "; composition "+s.ID[:12]+"\n") {
		t.Errorf("build's line does not end with the short composition ID %s: %q", s.ID[:12], text)
	}

	// --expect-id: the planned ID builds; another fails, leaving the
	// previous output as it was.
	again := runWarned(t, "build", "--profile", "storage-only", "--arch", "aarch64", "--release", "4.19", "--output", filepath.Join(parent, "text"), "--expect-id", s.ID)
	if again != text {
		t.Errorf("build --expect-id its own ID printed %q, want %q", again, text)
	}
	before := snapshot(t, filepath.Join(parent, "text"))
	other := strings.Repeat("ab", 32)
	stdout, stderr, code := runCLI(t, "build", "--profile", "storage-only", "--arch", "aarch64", "--release", "4.19", "--with", "multus", "--output", filepath.Join(parent, "text"), "--expect-id", other)
	if code != exitError || stdout != "" || !strings.HasSuffix(stderr, "is not "+other+" (--expect-id): the catalog, the release files, the tool's release knowledge or the flags differ from those the composition was planned with; nothing written\n") {
		t.Errorf("build --expect-id another ID: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if d := diffSnapshots(before, snapshot(t, filepath.Join(parent, "text"))); d != "" {
		t.Errorf("build --expect-id another ID changed the previous output: %s", d)
	}
}

// TestMatrix runs a matrix with a failing cell and a release newer than the
// tool: one JSON summary, every other cell written exactly as build writes
// it, the newer release's cells built with 5.1's rules and saying so.
func TestMatrix(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m")
	newer := filepath.Join(root(t), "testdata", "bad", "releases", "newer-5.2")
	stdout, stderr, code := runCLI(t, "matrix", "--profile", "minimal,full", "--arch", "x86_64,aarch64", "--release", "4.17,5.0",
		"--release-dir", newer, "--output", out, "--jobs", "3")
	if code != exitError {
		t.Errorf("matrix with failing cells: exit %d, want %d", code, exitError)
	}
	var sum matrix.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("matrix printed no summary: %v\n%s", err, stdout)
	}
	if len(sum.Cells) != 12 || sum.OK != 10 || sum.Failed != 2 {
		t.Fatalf("%d cells, %d ok, %d failed; want 12, 10, 2", len(sum.Cells), sum.OK, sum.Failed)
	}
	for _, c := range sum.Cells {
		failed := c.Release == "4.17" && c.Profile == "minimal"
		if failed != (c.Status == matrix.StatusFailed) {
			t.Errorf("cell %s: status %s, error %q", c.Cell, c.Status, c.Error)
		}
		if failed {
			if _, err := os.Stat(filepath.Join(out, c.Cell)); err == nil {
				t.Errorf("failed cell %s wrote a directory", c.Cell)
			}
			continue
		}
		lock, err := lockfile.Load(filepath.Join(out, c.Cell, output.LockFile))
		if err != nil || lock.ID != c.ID || lock.Release.Rules != c.Rules {
			t.Errorf("cell %s: lock %v id %q rules %q, summary id %q rules %q", c.Cell, err, lock.ID, lock.Release.Rules, c.ID, c.Rules)
		}
		if c.Release == "5.2" && (c.Rules != "5.1" || !strings.Contains(strings.Join(c.Warnings, "\n"), "release 5.2 is newer than the releases microshift-compose knows (the newest is 5.1): built assuming 5.1's rules: ")) {
			t.Errorf("cell %s of a newer release: rules %q, warnings %q", c.Cell, c.Rules, c.Warnings)
		}
	}
	for _, want := range []string{
		"cell 4.17-minimal-x86_64 failed: profile minimal leaves out networking-ovnk, which release 4.17 cannot honour",
		"warning: release 5.2 is newer than the releases microshift-compose knows (the newest is 5.1): built assuming 5.1's rules: config in /etc/microshift/config.d/10-microshift-compose.yaml with 5.1's ",
		"; refresh the knowledge from upstream's release-5.2 branch with 'make knowledge' in a microshift-compose source tree and rebuild, or use a microshift-compose that knows 5.2 (--strict-release refuses it) (5.2-minimal-x86_64, 5.2-minimal-aarch64, 5.2-full-x86_64, 5.2-full-aarch64)\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.HasSuffix(stderr, "error: 2 of 12 cells failed (their errors are in the summary and above)\n") {
		t.Errorf("stderr does not end with the failure count:\n%s", stderr)
	}
	cliGolden(t, "matrix-summary.json", []byte(strings.NewReplacer(out, "{out}", newer, "{newer}").Replace(stdout)))

	// A cell is what build writes for its selection, byte for byte.
	for _, c := range [][]string{
		{"5.0-full-aarch64", "--release", "5.0", "--profile", "full", "--arch", "aarch64"},
		{"5.2-minimal-x86_64", "--release-dir", newer, "--profile", "minimal", "--arch", "x86_64"},
	} {
		single := filepath.Join(t.TempDir(), "b")
		runCLI(t, append([]string{"build", "--output", single}, c[1:]...)...)
		if d := diffSnapshots(snapshot(t, single), snapshot(t, filepath.Join(out, c[0]))); d != "" {
			t.Errorf("matrix cell %s differs from build %s: %s", c[0], strings.Join(c[1:], " "), d)
		}
	}

	// --strict-release fails the newer release's cells only.
	stdout, _, code = runCLI(t, "matrix", "--profile", "full", "--arch", "x86_64", "--release", "5.0", "--release-dir", newer,
		"--output", filepath.Join(t.TempDir(), "s"), "--strict-release")
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || code != exitError || sum.OK != 1 || sum.Failed != 1 ||
		!strings.Contains(sum.Cells[1].Error, "release is newer than the releases microshift-compose knows (the newest is 5.1") {
		t.Errorf("matrix --strict-release: exit %d, %v, %+v", code, err, sum)
	}
}

// TestMatrixRedBoot: a cell whose device never becomes healthy fails as
// build does, naming --allow-red-boot; with it the cell is built with the
// warning, and the emitted jobs pass it on. Without --release, matrix
// builds the newest embedded release, as build does.
func TestMatrixRedBoot(t *testing.T) {
	cells := func(args ...string) (matrix.Summary, string, int) {
		t.Helper()
		stdout, stderr, code := runCLI(t, append([]string{"matrix", "--profile", "storage-only,full", "--arch", "x86_64", "--release", "4.18", "--output", filepath.Join(t.TempDir(), "m")}, args...)...)
		var sum matrix.Summary
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil || len(sum.Cells) != 2 {
			t.Fatalf("matrix %q: %v, %d cells\n%s", args, err, len(sum.Cells), stdout)
		}
		return sum, stderr, code
	}
	sum, stderr, code := cells()
	red := sum.Cells[0]
	if code != exitError || sum.Failed != 1 || red.Status != matrix.StatusFailed || !strings.HasPrefix(red.Error, "release 4.18: the device never becomes healthy: no CNI: ") || !strings.Contains(red.Error, "pass --allow-red-boot") {
		t.Errorf("matrix with a red-boot cell: exit %d, %+v", code, red)
	}
	if !strings.Contains(stderr, "cell 4.18-storage-only-x86_64 failed: release 4.18: the device never becomes healthy") {
		t.Errorf("stderr does not name the failed cell:\n%s", stderr)
	}
	sum, stderr, code = cells("--allow-red-boot")
	red = sum.Cells[0]
	if code != exitOK || sum.OK != 2 || !strings.Contains(strings.Join(red.Warnings, "\n"), "greenboot marks every boot red, even with a CNI of your own (built anyway: --allow-red-boot)") {
		t.Errorf("matrix --allow-red-boot: exit %d, %+v", code, red)
	}
	if !strings.Contains(stderr, "(built anyway: --allow-red-boot) (4.18-storage-only-x86_64)\n") {
		t.Errorf("stderr lacks the accepted red boot's warning:\n%s", stderr)
	}

	stdout := runWarned(t, "matrix", "--profile", "storage-only", "--arch", "x86_64", "--release", "4.18", "--allow-red-boot", "--emit", "github")
	var m struct {
		Include []map[string]string `json:"include"`
	}
	if err := json.Unmarshal([]byte(stdout), &m); err != nil || len(m.Include) != 1 || !strings.Contains(" "+m.Include[0]["build_args"]+" ", " --allow-red-boot ") {
		t.Errorf("--emit github --allow-red-boot: %v\n%s", err, stdout)
	}

	// No --release: the newest embedded, as build.
	out := filepath.Join(t.TempDir(), "n")
	stdout = runWarned(t, "matrix", "--profile", "full", "--arch", "x86_64", "--output", out)
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || len(sum.Cells) != 1 || sum.Cells[0].Cell != "5.0-full-x86_64" {
		t.Fatalf("matrix without --release: %v\n%s", err, stdout)
	}
	built := runWarned(t, "build", "--profile", "full", "--arch", "x86_64", "--output", filepath.Join(t.TempDir(), "b"), "--format", "json")
	var s assemble.Summary
	if err := json.Unmarshal([]byte(built), &s); err != nil || s.ID != sum.Cells[0].ID {
		t.Errorf("build without --release has ID %q (%v), matrix without it %q", s.ID, err, sum.Cells[0].ID)
	}
}
