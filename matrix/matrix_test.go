package matrix_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/matrix"
	"github.com/microshift-compose/microshift-compose/releases"
)

var update = flag.Bool("update", false, "rewrite golden files")

func catalog(t *testing.T) *components.Catalog {
	t.Helper()
	cat, err := components.Default()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func release(t *testing.T, constraint string) matrix.Release {
	t.Helper()
	r, err := releases.SelectEmbedded(constraint)
	if err != nil {
		t.Fatal(err)
	}
	return matrix.Release{Release: r, From: "--release " + constraint}
}

func TestCells(t *testing.T) {
	cat := catalog(t)
	r419, r50 := release(t, "4.19"), release(t, "5.0")
	cells, err := matrix.Cells(cat, matrix.Spec{Profiles: []string{"minimal", "full"}, Arches: []releases.Arch{releases.X86_64, releases.AArch64}, Releases: []matrix.Release{r419, r50}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cells {
		names = append(names, c.Name)
	}
	want := "4.19-minimal-x86_64 4.19-minimal-aarch64 4.19-full-x86_64 4.19-full-aarch64 5.0-minimal-x86_64 5.0-minimal-aarch64 5.0-full-x86_64 5.0-full-aarch64"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("cells = %s, want %s", got, want)
	}
}

func TestCellsErrors(t *testing.T) {
	cat := catalog(t)
	x86 := []releases.Arch{releases.X86_64}
	r50 := release(t, "5.0")
	tilde := release(t, "~5.0")
	for _, tc := range []struct {
		name string
		spec matrix.Spec
		want string
	}{
		{"no profile", matrix.Spec{Arches: x86, Releases: []matrix.Release{r50}}, "--profile: no profile given (a comma-separated list, e.g. minimal,full)"},
		{"no arch", matrix.Spec{Profiles: []string{"full"}, Releases: []matrix.Release{r50}}, "--arch: no arch given (a comma-separated list, e.g. x86_64,aarch64)"},
		{"no release", matrix.Spec{Profiles: []string{"full"}, Arches: x86}, "--release: no release given (a comma-separated list, e.g. 4.18,4.19,5.0, or --release-dir)"},
		{"unknown profile in the list", matrix.Spec{Profiles: []string{"minimal", "ful"}, Arches: x86, Releases: []matrix.Release{r50}}, `--profile: unknown profile "ful"; did you mean "full"?`},
		{"profile twice", matrix.Spec{Profiles: []string{"full", "full"}, Arches: x86, Releases: []matrix.Release{r50}}, "duplicate cell 5.0-full-x86_64: --profile or --arch names it twice"},
		{"two constraints, one release", matrix.Spec{Profiles: []string{"full"}, Arches: x86, Releases: []matrix.Release{r50, tilde}}, "duplicate cell 5.0-full-x86_64: --release 5.0 and --release ~5.0 select release 5.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := matrix.Cells(cat, tc.spec)
			if err == nil || err.Error() != tc.want {
				t.Errorf("Cells() = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestRun: every cell runs, at most jobs at once; a failing cell fails
// alone; the results are in cell order.
func TestRun(t *testing.T) {
	cat := catalog(t)
	cells, err := matrix.Cells(cat, matrix.Spec{Profiles: []string{"minimal", "networking-only", "storage-only", "full"}, Arches: []releases.Arch{releases.X86_64, releases.AArch64}, Releases: []matrix.Release{release(t, "4.19"), release(t, "5.0")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, jobs := range []int{1, 3} {
		t.Run(fmt.Sprint(jobs), func(t *testing.T) {
			var running, peak atomic.Int32
			var mu sync.Mutex
			ran := map[string]bool{}
			sum, err := matrix.Run(context.Background(), cells, jobs, func(_ context.Context, c matrix.Cell) (assemble.Summary, error) {
				n := running.Add(1)
				defer running.Add(-1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				mu.Lock()
				ran[c.Name] = true
				mu.Unlock()
				if c.Profile == "storage-only" && c.Arch == releases.AArch64 {
					return assemble.Summary{}, errors.New("no disk")
				}
				return assemble.Summary{ID: "id-" + c.Name, Release: assemble.SummaryRelease{Rules: c.Release.Release.Stream()}, Counts: assemble.Counts{Images: 3}, Warnings: []string{"w"}}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(ran) != len(cells) || sum.OK != len(cells)-2 || sum.Failed != 2 {
				t.Errorf("ran %d of %d cells, %d ok, %d failed; want all run, 2 failed", len(ran), len(cells), sum.OK, sum.Failed)
			}
			if int(peak.Load()) > jobs {
				t.Errorf("%d cells ran at once, --jobs %d", peak.Load(), jobs)
			}
			for i, r := range sum.Cells {
				if r.Cell != cells[i].Name {
					t.Fatalf("result %d is %s, want %s", i, r.Cell, cells[i].Name)
				}
				failed := cells[i].Profile == "storage-only" && cells[i].Arch == releases.AArch64
				switch {
				case failed && (r.Status != matrix.StatusFailed || r.Error != "no disk" || r.ID != "" || r.Counts != nil):
					t.Errorf("failed cell %s: %+v", r.Cell, r)
				case !failed && (r.Status != matrix.StatusOK || r.ID != "id-"+r.Cell || r.Counts == nil || r.Counts.Images != 3 || r.Rules != r.Release || len(r.Warnings) != 1):
					t.Errorf("cell %s: %+v", r.Cell, r)
				}
			}
		})
	}
	// A cell that panics fails alone: every other cell still runs and is
	// summarised.
	sum, err := matrix.Run(context.Background(), cells, 2, func(_ context.Context, c matrix.Cell) (assemble.Summary, error) {
		if c.Profile == "full" && c.Arch == releases.X86_64 {
			panic("the cell's renderer exploded")
		}
		return assemble.Summary{ID: "id-" + c.Name}, nil
	})
	if err != nil || sum.OK != len(cells)-2 || sum.Failed != 2 {
		t.Errorf("Run with a panicking cell = %d ok, %d failed, %v; want 2 failed", sum.OK, sum.Failed, err)
	}
	for _, r := range sum.Cells {
		if r.Profile == "full" && r.Arch == "x86_64" && !strings.HasPrefix(r.Error, "cell "+r.Cell+" failed: internal error: the cell's renderer exploded") {
			t.Errorf("panicking cell %s: %+v", r.Cell, r)
		}
	}
	if _, err := matrix.Run(context.Background(), cells, 0, nil); err == nil || err.Error() != "--jobs must be 1 or more, got 0" {
		t.Errorf("Run(jobs 0) = %v", err)
	}
}

// results are two fixed cells for the emit goldens.
func results() []matrix.Result {
	counts := &assemble.Counts{Components: 4, Images: 9}
	return []matrix.Result{
		{CellRef: matrix.CellRef{Cell: "4.19-full-x86_64", Profile: "full", Arch: "x86_64", Release: "4.19", ID: strings.Repeat("a1", 32)}, Status: matrix.StatusOK, Rules: "4.19", Counts: counts},
		{CellRef: matrix.CellRef{Cell: "5.0-minimal-aarch64", Profile: "minimal", Arch: "aarch64", Release: "5.0", ID: strings.Repeat("b2", 32)}, Status: matrix.StatusOK, Rules: "5.0", Counts: counts},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join(testutil.Root(t), "testdata", "golden", "matrix", name), got, *update, "go test ./matrix -update")
}

func TestEmitGolden(t *testing.T) {
	args := []string{"--with=multus", "--bootc"}
	cells := results()
	cells[1].ReleaseDir = "releases/5.0.3" // RepoRelative's
	gh, err := matrix.GitHub(cells, args)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "github.json", gh)
	wf, err := matrix.GitHubWorkflow(cells, matrix.WorkflowOptions{Args: args, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "github-workflow.yaml", wf)
	opts := matrix.TektonOptions{Image: "quay.io/example/microshift-compose:1.0", Args: args, Claim: "compositions"}
	tk, err := matrix.Tekton(results(), opts)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "tekton.yaml", tk)
	// Deterministic: the same cells, the same bytes.
	if again, _ := matrix.Tekton(results(), opts); string(again) != string(tk) {
		t.Error("a second Tekton emit differs")
	}
	if again, _ := matrix.GitHubWorkflow(cells, matrix.WorkflowOptions{Args: args, Version: "1.2.3"}); string(again) != string(wf) {
		t.Error("a second workflow emit differs")
	}
}

// TestCellArgs: the arguments rebuild the cell as it was planned: a
// release directory instead of the stream it holds, the shared flags, the
// ID to check.
func TestCellArgs(t *testing.T) {
	r := results()
	if got, want := strings.Join(matrix.CellArgs(r[0], []string{"--with=multus"}), " "), "--profile full --arch x86_64 --release 4.19 --with=multus --expect-id "+strings.Repeat("a1", 32); got != want {
		t.Errorf("CellArgs(embedded) = %s, want %s", got, want)
	}
	r[1].ReleaseDir = "rel-5.0.3"
	if got, want := strings.Join(matrix.CellArgs(r[1], nil), " "), "--profile minimal --arch aarch64 --release-dir rel-5.0.3 --expect-id "+strings.Repeat("b2", 32); got != want {
		t.Errorf("CellArgs(release dir) = %s, want %s", got, want)
	}
}

func TestInstallVersion(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"v1.2.3", "v1.2.3"},
		{"1.2.3", "v1.2.3"}, // goreleaser's builds
		{"v1.3.0-rc.1", "v1.3.0-rc.1"},
		{"v0.0.0-20261125112813-111413ce3cf8", "v0.0.0-20261125112813-111413ce3cf8"}, // make build before the first tag
		{"(devel)", ""},
		{"", ""},
		{"v1.2.3-4-gabcdef012345", ""}, // git describe between tags
		{"v1.2.3-dirty", ""},
		{"v1.2", ""},
		{"latest", ""},
	} {
		got, err := matrix.InstallVersion(tc.in)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("InstallVersion(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), "is no version go install can fetch") {
			t.Errorf("InstallVersion(%q): %v", tc.in, err)
		}
	}
}

// TestBuildFacts: what the workflow installs is this module's command,
// built with the Makefile's tags.
func TestBuildFacts(t *testing.T) {
	root := testutil.Root(t)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	module := strings.TrimPrefix(strings.SplitN(string(gomod), "\n", 2)[0], "module ")
	if matrix.Package != module+"/cmd/microshift-compose" {
		t.Errorf("Package = %s, want %s/cmd/microshift-compose", matrix.Package, module)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^TAGS\s*:=\s*(\S+)$`).FindSubmatch(makefile); m == nil || string(m[1]) != matrix.BuildTags {
		t.Errorf("Makefile TAGS %q, BuildTags %q", m, matrix.BuildTags)
	}
	containerfile, err := os.ReadFile(filepath.Join(root, "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if user := fmt.Sprintf("\nUSER %d:%d\n", matrix.RunnerUser, matrix.RunnerUser); !strings.Contains(string(containerfile), user) {
		t.Errorf("the Containerfile has no %q: the Tekton pods' fsGroup is RunnerUser", user)
	}
}

func TestRepoRelative(t *testing.T) {
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	for _, d := range []string{".git", "releases/5.0.3", "sub", "with space"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(top, "elsewhere")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(repo, "link-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repo, "releases"), filepath.Join(top, "link-in")); err != nil {
		t.Fatal(err)
	}
	// From a subdirectory, as a user in it would run matrix.
	t.Chdir(filepath.Join(repo, "sub"))
	root, err := matrix.RepoRoot(".")
	if err != nil || root != repo {
		t.Fatalf("RepoRoot(sub) = %q, %v; want %s", root, err, repo)
	}
	for _, tc := range []struct{ dir, want, err string }{
		{"../releases/5.0.3", "releases/5.0.3", ""},
		{filepath.Join(repo, "releases", "5.0.3"), "releases/5.0.3", ""}, // absolute, from the laptop
		{filepath.Join(top, "link-in", "5.0.3"), "releases/5.0.3", ""},   // a link into the repository
		{outside, "", "is outside the repository"},
		{"../link-out", "", "is outside the repository"},
		{"../with space", "", "cannot stand on a job's command line"},
		{"../missing", "", "no such file or directory"},
	} {
		got, err := matrix.RepoRelative(root, tc.dir)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("RepoRelative(%s) = %q, %v; want %q, %q", tc.dir, got, err, tc.want, tc.err)
		}
	}
	if _, err := matrix.RepoRoot(outside); !errors.Is(err, matrix.ErrNoRepository) {
		t.Errorf("RepoRoot(outside a repository) = %v", err)
	}
}

func TestEmitErrors(t *testing.T) {
	failed := results()
	failed[1].Status, failed[1].Error, failed[1].ID = matrix.StatusFailed, "release 5.0 has no release-aarch64.json", ""
	if _, err := matrix.GitHub(failed, nil); err == nil || err.Error() != "cell 5.0-minimal-aarch64: release 5.0 has no release-aarch64.json" {
		t.Errorf("GitHub(failed cell) = %v", err)
	}
	if _, err := matrix.GitHubWorkflow(failed, matrix.WorkflowOptions{Version: "v1.2.3"}); err == nil || err.Error() != "cell 5.0-minimal-aarch64: release 5.0 has no release-aarch64.json" {
		t.Errorf("GitHubWorkflow(failed cell) = %v", err)
	}
	if _, err := matrix.GitHubWorkflow(results(), matrix.WorkflowOptions{Version: "(devel)"}); err == nil || !strings.Contains(err.Error(), "microshift-compose (devel) is no version go install can fetch") {
		t.Errorf("GitHubWorkflow(devel) = %v", err)
	}
	hostile := results()
	hostile[0].ReleaseDir = "rel; rm -rf ~"
	if _, err := matrix.GitHub(hostile, nil); err == nil || err.Error() != `cell 4.19-full-x86_64: argument "rel; rm -rf ~" cannot be passed on a job's command line as it is` {
		t.Errorf("GitHub(hostile release dir) = %v", err)
	}
	if _, err := matrix.GitHub(results(), []string{"--with=$(id)"}); err == nil || !strings.Contains(err.Error(), "cannot be passed on a job's command line") {
		t.Errorf("GitHub(hostile flag) = %v", err)
	}
	opts := matrix.TektonOptions{Image: "x", Claim: "c"}
	if _, err := matrix.Tekton(failed, opts); err == nil || !strings.HasPrefix(err.Error(), "cell 5.0-minimal-aarch64: ") {
		t.Errorf("Tekton(failed cell) = %v", err)
	}
	if _, err := matrix.Tekton(results(), matrix.TektonOptions{Image: "x"}); err == nil || !strings.Contains(err.Error(), "no PersistentVolumeClaim") {
		t.Errorf("Tekton(no claim) = %v", err)
	}
	dir := results()
	dir[0].ReleaseDir = "/srv/release"
	if _, err := matrix.Tekton(dir, opts); err == nil || !strings.Contains(err.Error(), "embedded releases only") {
		t.Errorf("Tekton(release dir) = %v", err)
	}
	clash := results()
	clash[1].Cell = "4.19-full-x86.64"
	if _, err := matrix.Tekton(clash, opts); err == nil || !strings.Contains(err.Error(), "are both Tekton task build-4-19-full-x86-64") {
		t.Errorf("Tekton(clashing names) = %v", err)
	}
}
