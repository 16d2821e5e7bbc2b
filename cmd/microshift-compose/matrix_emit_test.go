package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/matrix"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

// workflow is the part of an emitted GitHub workflow the tests read.
type workflow struct {
	Jobs map[string]struct {
		Strategy struct {
			Matrix struct {
				Include []map[string]string `json:"include"`
			} `json:"matrix"`
		} `json:"strategy"`
		Steps []struct {
			Name string            `json:"name"`
			Uses string            `json:"uses"`
			Run  string            `json:"run"`
			Env  map[string]string `json:"env"`
			With map[string]any    `json:"with"`
		} `json:"steps"`
	} `json:"jobs"`
}

// step returns the run line and environment of the step of job whose
// name (or, without one, run line) starts with prefix.
func (w *workflow) step(t *testing.T, job, prefix string) (string, map[string]string) {
	t.Helper()
	for _, s := range w.Jobs[job].Steps {
		if strings.HasPrefix(s.Name, prefix) || (s.Name == "" && strings.HasPrefix(s.Run, prefix)) {
			return s.Run, s.Env
		}
	}
	t.Fatalf("job %s has no step %q", job, prefix)
	return "", nil
}

// expression is a GitHub Actions expression: ${{ matrix.cell }}.
var expression = regexp.MustCompile(`\$\{\{\s*([a-z]+)\.([a-z_]+)\s*\}\}`)

// expand replaces the expressions of s as the runner does: matrix.* from
// the job's matrix entry, runner.temp.
func expand(t *testing.T, s string, cell map[string]string, runnerTemp string) string {
	t.Helper()
	return expression.ReplaceAllStringFunc(s, func(e string) string {
		m := expression.FindStringSubmatch(e)
		switch {
		case m[1] == "matrix":
			v, ok := cell[m[2]]
			if !ok {
				t.Fatalf("%s: the matrix entry has no %s", e, m[2])
			}
			return v
		case m[1] == "runner" && m[2] == "temp":
			return runnerTemp
		}
		t.Fatalf("no value for %s", e)
		return ""
	})
}

// bash runs a workflow step's run line as the runner does (bash -e) in
// dir with env added, and returns its output and exit code.
func bash(t *testing.T, dir, script string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(needTool(t, "bash", "bash"), "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("bash: %v", err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// gitRepo makes dir a git work tree, as a checkout of the user's
// repository is.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command(needTool(t, "git", "git"), "init", "-q", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

// moduleProxy is a Go module proxy in a directory (GOPROXY=file://...)
// serving this checkout's module at version, as the module proxy serves a
// pushed tag: the files git tracks or would track (not those of nested
// modules such as hack/tektoncheck), from the work tree. The other modules
// come from the local module cache, so nothing is downloaded.
func moduleProxy(t *testing.T, root string) (proxy, version string) {
	t.Helper()
	out, err := exec.Command(needTool(t, "git", "git"), "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	nested := map[string]bool{}
	for _, f := range files {
		if filepath.Base(f) == "go.mod" && f != "go.mod" {
			nested[filepath.Dir(f)+"/"] = true
		}
	}
	contents := map[string][]byte{}
	h := sha256.New()
	for _, f := range files {
		skip := false
		for dir := range nested {
			skip = skip || strings.HasPrefix(f, dir)
		}
		st, err := os.Lstat(filepath.Join(root, f))
		if skip || err != nil || !st.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		contents[f] = data
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(data))
		h.Write(data)
	}
	// The version names the content: the module cache keeps what it
	// extracted of a version for good, so another checkout served under
	// the same version would install that one's binary.
	version = fmt.Sprintf("v1.2.3-test.h%x", h.Sum(nil)[:6])
	const module = "github.com/microshift-compose/microshift-compose"
	// What go install extracts of it is removed afterwards (the module
	// cache makes it read-only), so that the cache does not keep a copy
	// of each checkout tested.
	t.Cleanup(func() {
		cache := goEnv(t, "GOMODCACHE")
		extracted := filepath.Join(cache, filepath.FromSlash(module)+"@"+version)
		filepath.WalkDir(extracted, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(path, 0o755)
			}
			return nil
		})
		os.RemoveAll(extracted)
		downloaded, _ := filepath.Glob(filepath.Join(cache, "cache", "download", filepath.FromSlash(module), "@v", version+".*"))
		for _, f := range downloaded {
			os.Remove(f)
		}
	})
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	added := 0
	for _, f := range files {
		data, ok := contents[f]
		if !ok {
			continue
		}
		w, err := zw.Create(module + "@" + version + "/" + f)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		added++
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if added < 100 {
		t.Fatalf("the module zip has %d files", added)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	proxy = t.TempDir()
	dir := filepath.Join(proxy, filepath.FromSlash(module), "@v")
	writeFileMode(t, filepath.Join(dir, "list"), []byte(version+"\n"), 0o644)
	writeFileMode(t, filepath.Join(dir, version+".info"), []byte(`{"Version":"`+version+`","Time":"2025-01-02T03:04:05Z"}`), 0o644)
	writeFileMode(t, filepath.Join(dir, version+".mod"), gomod, 0o644)
	writeFileMode(t, filepath.Join(dir, version+".zip"), zb.Bytes(), 0o644)
	return proxy, version
}

// TestMatrixEmitGitHub plans a matrix in a subdirectory of a repository,
// with a release directory named by its absolute path, as on a laptop,
// and runs the emitted workflow's steps as the runner would: the install
// job's go install (from a module proxy in a directory serving this
// checkout as v1.2.3-test.h<content hash>), then one cell's build step in the repository's
// checkout, which must reproduce the planned composition ID; with the
// release directory changed after planning, the step fails and writes
// nothing. The workflow passes actionlint (which type-checks matrix.*
// against the matrix it holds); the one-line --emit github is its matrix.
func TestMatrixEmitGitHub(t *testing.T) {
	actionlint := testutil.GoTool(t, "github.com/rhysd/actionlint/cmd/actionlint", "v1.7.12")
	src := root(t)
	repo := filepath.Join(t.TempDir(), "repo")
	gitRepo(t, repo)
	nightly := filepath.Join(repo, "releases", "5.2-nightly")
	copyTree(t, filepath.Join(src, "testdata", "bad", "releases", "newer-5.2"), nightly)
	if err := os.MkdirAll(filepath.Join(repo, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(repo, "ci"))

	proxy, version := moduleProxy(t, src)
	plan := []string{"matrix", "--profile", "minimal,full", "--arch", "x86_64", "--release", "5.0", "--release-dir", nightly, "--bootc"}
	stdout := runWarned(t, append(plan, "--emit", "github-workflow", "--tool-version", version)...)
	var wf workflow
	if err := yaml.Unmarshal([]byte(stdout), &wf); err != nil {
		t.Fatalf("the workflow is no YAML: %v\n%s", err, stdout)
	}
	cells := wf.Jobs["build"].Strategy.Matrix.Include
	if len(cells) != 4 {
		t.Fatalf("the workflow's matrix has %d cells, want 4:\n%s", len(cells), stdout)
	}
	byName := map[string]map[string]string{}
	for _, c := range cells {
		byName[c["cell"]] = c
	}
	cell := byName["5.2-full-x86_64"]
	if cell["release_dir"] != "releases/5.2-nightly" || !strings.HasPrefix(cell["build_args"], "--profile full --arch x86_64 --release-dir releases/5.2-nightly --bootc --expect-id ") ||
		!strings.HasSuffix(cell["build_args"], " "+cell["id"]) || len(cell["id"]) != 64 {
		t.Errorf("cell of the release directory: %v; want the directory as a path in the repository, its own arguments and ID", cell)
	}
	if c := byName["5.0-minimal-x86_64"]; c["release_dir"] != "" || !strings.HasPrefix(c["build_args"], "--profile minimal --arch x86_64 --release 5.0 --bootc --expect-id ") {
		t.Errorf("cell of an embedded release: %v", c)
	}

	// The one-line matrix is the workflow's.
	var m struct {
		Include []map[string]string `json:"include"`
	}
	line := runWarned(t, append(plan, "--emit", "github")...)
	if err := json.Unmarshal([]byte(line), &m); err != nil || strings.Count(line, "\n") != 1 || fmt.Sprint(m.Include) != fmt.Sprint(cells) {
		t.Errorf("--emit github = %q (%v), want the workflow's matrix %v on one line", line, err, cells)
	}

	// actionlint, as the workflow is committed; live: a property the
	// matrix does not have is refused.
	lint := func(wf string) (string, error) {
		path := filepath.Join(repo, ".github", "workflows", "compositions.yaml")
		writeFileMode(t, path, []byte(wf), 0o644)
		cmd := exec.Command(actionlint, "-no-color", path)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := lint(stdout); err != nil {
		t.Errorf("actionlint rejects the emitted workflow: %v\n%s", err, out)
	}
	if out, err := lint(strings.Replace(stdout, "matrix.build_args", "matrix.digest", 1)); err == nil || !strings.Contains(out, `property "digest" is not defined`) {
		t.Errorf("actionlint accepted matrix.digest: %v\n%s", err, out)
	}

	// The install job, with the module proxy the runner would reach.
	runnerTemp := t.TempDir()
	install, env := wf.step(t, "install", "go install")
	if want := "go install -trimpath -tags " + buildTags + " " + matrix.Package + "@" + version; install != want {
		t.Errorf("install step runs %q, want %q", install, want)
	}
	stepEnv := []string{"GOFLAGS=", "GOPROXY=file://" + proxy + ",file://" + filepath.Join(goEnv(t, "GOMODCACHE"), "cache", "download"), "GOSUMDB=off", "GOTOOLCHAIN=local"}
	for k, v := range env {
		stepEnv = append(stepEnv, k+"="+expand(t, v, nil, runnerTemp))
	}
	if out, code := bash(t, runnerTemp, install, stepEnv...); code != 0 {
		t.Fatalf("the install step: exit %d\n%s", code, out)
	}
	check, _ := wf.step(t, "install", `"$RUNNER_TEMP/bin/microshift-compose" version`)
	out, code := bash(t, runnerTemp, check, "RUNNER_TEMP="+runnerTemp)
	if code != 0 || !strings.HasPrefix(out, "microshift-compose "+version+" (") {
		t.Errorf("the installed microshift-compose says %q (exit %d), want %s", out, code, version)
	}

	// One cell's build step, in the checkout, the installed binary on PATH.
	build, _ := wf.step(t, "build", "build ")
	script := expand(t, build, cell, runnerTemp)
	path := "PATH=" + filepath.Join(runnerTemp, "bin") + string(os.PathListSeparator) + os.Getenv("PATH")
	out, code = bash(t, repo, script, path)
	if code != 0 {
		t.Fatalf("the cell's build step %q: exit %d\n%s", script, code, out)
	}
	lock, err := lockfile.Load(filepath.Join(repo, "out", cell["cell"], output.LockFile))
	if err != nil || lock.ID != cell["id"] {
		t.Fatalf("the cell's build step wrote ID %q (%v), planned %s", lock.ID, err, cell["id"])
	}
	t.Logf("GitHub cell %s reproduces its ID: %s\n$ %s\n%s", cell["cell"], lock.ID, script, out)

	// The release directory changed after planning: the step fails.
	if err := os.RemoveAll(filepath.Join(repo, "out")); err != nil {
		t.Fatal(err)
	}
	core := filepath.Join(nightly, "release-x86_64.json")
	data, err := os.ReadFile(core)
	if err != nil {
		t.Fatal(err)
	}
	writeFileMode(t, core, bytes.Replace(data, []byte("nightly-2027-01-04"), []byte("nightly-2027-01-05"), 1), 0o644)
	out, code = bash(t, repo, script, path)
	if code != exitError || !strings.Contains(out, "is not "+cell["id"]+" (--expect-id)") {
		t.Errorf("the cell's build step with another release: exit %d, want %d and the ID mismatch:\n%s", code, exitError, out)
	}
	if _, err := os.Stat(filepath.Join(repo, "out")); err == nil {
		t.Error("the failed build step wrote its output")
	}
}

// goEnv is a value of `go env`.
func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}

// TestMatrixEmitGitHubErrors: what the jobs could not reproduce is refused
// before anything is printed.
func TestMatrixEmitGitHubErrors(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	gitRepo(t, repo)
	inside := filepath.Join(repo, "rel")
	copyTree(t, filepath.Join(root(t), "testdata", "bad", "releases", "newer-5.2"), inside)
	outside := filepath.Join(t.TempDir(), "rel")
	copyTree(t, filepath.Join(root(t), "testdata", "bad", "releases", "newer-5.2"), outside)
	spaced := filepath.Join(repo, "rel 5.2")
	copyTree(t, filepath.Join(root(t), "testdata", "bad", "releases", "newer-5.2"), spaced)
	noRepo := t.TempDir()
	base := []string{"matrix", "--profile", "full", "--arch", "x86_64"}
	for _, tc := range []struct {
		name, dir string
		args      []string
		want      string
	}{
		{"release directory outside the repository", repo, []string{"--release-dir", outside, "--emit", "github"},
			"--release-dir " + outside + " is outside the repository " + repo + ", which is all the CI jobs check out"},
		{"no repository", noRepo, []string{"--release-dir", inside, "--emit", "github-workflow", "--tool-version", "v1.2.3"},
			"--emit github-workflow with --release-dir: the jobs check out the repository of the working directory and read release directories from it: " + noRepo + ": not in a git work tree"},
		{"a path no command line carries", repo, []string{"--release-dir", spaced, "--emit", "github"},
			"--release-dir " + spaced + `: its path in the repository, "rel 5.2", cannot stand on a job's command line as it is`},
		{"a development build", repo, []string{"--release", "5.0", "--emit", "github-workflow"},
			"--emit github-workflow: microshift-compose (devel) is no version go install can fetch (a release tag such as v1.2.3, or a Go pseudo-version of a pushed commit): the workflow installs the microshift-compose that planned the cells; pass --tool-version VERSION"},
		{"a dirty version", repo, []string{"--release", "5.0", "--emit", "github-workflow", "--tool-version", "v1.2.3-dirty"},
			"--tool-version: microshift-compose v1.2.3-dirty is no version go install can fetch"},
		{"tool version without the workflow", repo, []string{"--release", "5.0", "--emit", "github", "--tool-version", "v1.2.3"},
			"--tool-version is for --emit github-workflow only"},
		{"claim without tekton", repo, []string{"--release", "5.0", "--emit", "github", "--output-claim", "c"},
			"--output-claim is for --emit tekton only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(tc.dir)
			stdout, stderr, code := runCLI(t, append(cloneArgs(base), tc.args...)...)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, "error: "+tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, stdout, stderr, exitUsage, tc.want)
			}
		})
	}
}

// cloneArgs copies a list of arguments, so that append does not share it.
func cloneArgs(s []string) []string { return append([]string(nil), s...) }

// pipelineRun is the part of an emitted PipelineRun the tests read.
type pipelineRun struct {
	Spec struct {
		Workspaces []struct {
			Name                  string `json:"name"`
			PersistentVolumeClaim struct {
				ClaimName string `json:"claimName"`
			} `json:"persistentVolumeClaim"`
		} `json:"workspaces"`
		TaskRunTemplate struct {
			PodTemplate struct {
				SecurityContext struct {
					FSGroup int `json:"fsGroup"`
				} `json:"securityContext"`
			} `json:"podTemplate"`
		} `json:"taskRunTemplate"`
		PipelineSpec struct {
			Tasks []struct {
				Name   string `json:"name"`
				Params []struct {
					Name  string `json:"name"`
					Value string `json:"value"`
				} `json:"params"`
				TaskSpec struct {
					Steps []struct {
						Image   string   `json:"image"`
						Command []string `json:"command"`
						Args    []string `json:"args"`
					} `json:"steps"`
				} `json:"taskSpec"`
			} `json:"tasks"`
		} `json:"pipelineSpec"`
	} `json:"spec"`
}

// tektonVariable is a Tekton variable: $(params.id).
var tektonVariable = regexp.MustCompile(`\$\(([a-zA-Z.]+)\)`)

// tektonCommand is the command line task i of the PipelineRun runs, its
// variables replaced as Tekton replaces them: the task's parameters, the
// PipelineRun's name (run), the workspace's path.
func tektonCommand(t *testing.T, data []byte, i int, run, workspace string) (argv []string, params map[string]string) {
	t.Helper()
	var pr pipelineRun
	if err := yaml.Unmarshal(data, &pr); err != nil {
		t.Fatalf("the PipelineRun is no YAML: %v", err)
	}
	task := pr.Spec.PipelineSpec.Tasks[i]
	vars := map[string]string{"context.pipelineRun.name": run, "workspaces.output.path": workspace}
	params = map[string]string{}
	for _, p := range task.Params {
		params[p.Name] = tektonVariable.ReplaceAllStringFunc(p.Value, func(v string) string { return vars[v[2:len(v)-1]] })
		vars["params."+p.Name] = params[p.Name]
	}
	step := task.TaskSpec.Steps[0]
	for _, a := range append(cloneArgs(step.Command), step.Args...) {
		argv = append(argv, tektonVariable.ReplaceAllStringFunc(a, func(v string) string {
			val, ok := vars[v[2:len(v)-1]]
			if !ok {
				t.Fatalf("task %s: no value for %s", task.Name, v)
			}
			return val
		}))
	}
	return argv, params
}

// TestMatrixEmitTekton: the emitted PipelineRun is valid by Tekton's own
// API types and validation (hack/tektoncheck, a module of its own), one
// task per cell, writing to the claim named; one task's command, run as
// Tekton would run it, reproduces the planned ID, and fails, writing
// nothing, when the ID is another.
func TestMatrixEmitTekton(t *testing.T) {
	check := testutil.ModuleTool(t, "hack/tektoncheck")
	emit := []string{"matrix", "--profile", "minimal,full", "--arch", "x86_64,aarch64", "--release", "5.0", "--emit", "tekton", "--runner-image", "quay.io/example/microshift-compose:1.0", "--output-claim", "compositions", "--bootc"}
	stdout := runWarned(t, emit...)
	validate := func(doc string) (string, error) {
		cmd := exec.CommandContext(context.Background(), check)
		cmd.Stdin = strings.NewReader(doc)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := validate(stdout); err != nil || out != "valid: PipelineRun microshift-compose-matrix-x7k2p with 4 tasks\n" {
		t.Errorf("tektoncheck: %v\n%s", err, out)
	}
	var pr pipelineRun
	if err := yaml.Unmarshal([]byte(stdout), &pr); err != nil {
		t.Fatal(err)
	}
	if ws := pr.Spec.Workspaces; len(ws) != 1 || ws[0].PersistentVolumeClaim.ClaimName != "compositions" || pr.Spec.TaskRunTemplate.PodTemplate.SecurityContext.FSGroup != matrix.RunnerUser {
		t.Errorf("PipelineRun workspaces %+v, pod template %+v: want the claim compositions and fsGroup %d", ws, pr.Spec.TaskRunTemplate, matrix.RunnerUser)
	}
	for _, want := range []string{"- name: build-5-0-full-aarch64\n", "- --bootc\n", "- --expect-id\n", "value: quay.io/example/microshift-compose:1.0\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("PipelineRun lacks %q", want)
		}
	}
	// The check is live: a step reading a parameter its task lacks is refused.
	broken := strings.Replace(stdout, "$(params.profile)", "$(params.flavour)", 1)
	if out, err := validate(broken); err == nil || !strings.Contains(out, `non-existent variable in "$(params.flavour)"`) {
		t.Errorf("tektoncheck accepted an unknown parameter: %v\n%s", err, out)
	}
	if again := runWarned(t, emit...); again != stdout {
		t.Error("a second --emit tekton differs")
	}

	// Task 2 (5.0-full-x86_64) as Tekton runs it, with the binary.
	bin := e2eBinary(t)
	workspace := t.TempDir()
	argv, params := tektonCommand(t, []byte(stdout), 2, "microshift-compose-matrix-x7k2p", workspace)
	if argv[0] != "microshift-compose" || params["cell"] != "5.0-full-x86_64" {
		t.Fatalf("task 2 runs %q with %v", argv, params)
	}
	r := runBinary(t, bin, t.TempDir(), argv[1:]...)
	var s assemble.Summary
	if err := json.Unmarshal([]byte(r.stdout), &s); r.code != 0 || err != nil || s.ID != params["id"] || s.Output != filepath.Join(workspace, "microshift-compose-matrix-x7k2p", params["cell"]) {
		t.Fatalf("task 2 (%q): exit %d, summary %+v (%v), want ID %s under the run's directory\n%s", argv, r.code, s, err, params["id"], r.stderr)
	}
	// Another ID (a tool that plans otherwise): the task fails.
	other := strings.Replace(stdout, "value: "+params["id"], "value: "+strings.Repeat("ab", 32), 1)
	argv, _ = tektonCommand(t, []byte(other), 2, "run-2", workspace)
	r = runBinary(t, bin, t.TempDir(), argv[1:]...)
	if r.code != exitError || !strings.Contains(r.stderr, " is not "+strings.Repeat("ab", 32)+" (--expect-id)") {
		t.Errorf("task 2 with another ID: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(workspace, "run-2")); err == nil {
		t.Error("the failed task wrote its output")
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--runner-image", "quay.io/x/y:1"}, "--emit tekton needs --output-claim CLAIM"},
		{[]string{"--runner-image", "quay.io/x/y:1", "--output-claim", "Bad_Claim"}, `--output-claim: metadata.name "Bad_Claim" is not a valid PersistentVolumeClaim name`},
		{[]string{"--output-claim", "c"}, "--emit tekton needs --runner-image IMAGE"},
		{[]string{"--runner-image", "microshift-compose:1", "--output-claim", "c"}, `--runner-image: "microshift-compose:1" is not an image reference with its registry`},
	} {
		_, stderr, code := runCLI(t, append([]string{"matrix", "--profile", "full", "--arch", "x86_64", "--release", "5.0", "--emit", "tekton"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, "error: "+tc.want) {
			t.Errorf("matrix --emit tekton %q: exit %d, stderr %q; want %q", tc.args, code, stderr, tc.want)
		}
	}
}
