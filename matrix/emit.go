package matrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
)

// Emit formats.
const (
	EmitGitHub         = "github"
	EmitGitHubWorkflow = "github-workflow"
	EmitTekton         = "tekton"
)

// Package is the microshift-compose command, which the emitted GitHub
// workflow installs with go install.
const Package = "github.com/microshift-compose/microshift-compose/cmd/microshift-compose"

// BuildTags are the tags microshift-compose is built with (the Makefile's
// TAGS): osbuild/images' container dependencies on their pure-Go code
// paths, so that it builds without cgo.
const BuildTags = "containers_image_openpgp,exclude_graphdriver_btrfs,exclude_graphdriver_devicemapper"

// RunnerUser is the user (and group) ID the microshift-compose image runs
// as (the Containerfile's USER): the Tekton pods' fsGroup, so that the
// claim's volume is writable to it.
const RunnerUser = 65532

// shellSafe is what an argument of an emitted command line may be:
// component and profile names, modes, image references, repository
// paths; nothing a shell would read differently, nothing that starts an
// option where a value is expected.
var shellSafe = lazyregexp.New(`^[A-Za-z0-9._][A-Za-z0-9._:/@+=,-]*$|^--[a-z][a-z0-9-]*(=[A-Za-z0-9._:/@+=,-]+)?$`)

// ShellSafe reports whether s can stand as one argument on a shell command
// line as it is.
func ShellSafe(s string) bool { return shellSafe.MatchString(s) }

// CellArgs are the arguments of 'microshift-compose build' that rebuild
// the composition planned for r, but --output: its --profile and --arch,
// its release (--release STREAM, or --release-dir DIR for a release
// directory), the build flags every cell shares and --expect-id with its
// ID, so that the build fails when it would compose anything else.
func CellArgs(r Result, shared []string) []string {
	args := []string{"--profile", r.Profile, "--arch", r.Arch}
	if r.ReleaseDir != "" {
		args = append(args, "--release-dir", r.ReleaseDir)
	} else {
		args = append(args, "--release", r.Release)
	}
	args = append(args, shared...)
	return append(args, "--expect-id", r.ID)
}

// githubCell is one entry of the GitHub matrix's include list: a job's
// matrix.cell, matrix.profile, ...
type githubCell struct {
	CellRef
	// BuildArgs are CellArgs as one string for the job's command line
	// (each argument without spaces or shell syntax).
	BuildArgs string `json:"build_args"`
}

// githubCells checks the cells for a GitHub job's command line and lists
// them with their build arguments.
func githubCells(results []Result, args []string) ([]githubCell, error) {
	if err := allOK(results); err != nil {
		return nil, err
	}
	cells := make([]githubCell, len(results))
	for i, r := range results {
		if !ShellSafe(r.Cell) {
			return nil, fmt.Errorf("cell %q: its name cannot stand in a job's command line as it is", r.Cell)
		}
		a := CellArgs(r, args)
		for _, arg := range a {
			if !ShellSafe(arg) {
				return nil, fmt.Errorf("cell %s: argument %q cannot be passed on a job's command line as it is", r.Cell, arg)
			}
		}
		cells[i] = githubCell{CellRef: r.CellRef, BuildArgs: strings.Join(a, " ")}
	}
	return cells, nil
}

// GitHub renders the cells as a GitHub Actions strategy.matrix: one JSON
// line, {"include": [...]}, for a job to write into $GITHUB_OUTPUT and the
// build job to read with fromJSON (or to paste under strategy.matrix: JSON
// is YAML). Each entry's build_args are what 'microshift-compose build'
// needs to rebuild the cell and check its ID (CellArgs). Every cell must
// have succeeded, and release directories must be repository paths
// (RepoRelative). args are the build flags every cell shares.
func GitHub(results []Result, args []string) ([]byte, error) {
	cells, err := githubCells(results, args)
	if err != nil {
		return nil, err
	}
	m := struct {
		Include []githubCell `json:"include"`
	}{Include: cells}
	return jsonLine(m)
}

func jsonLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding the GitHub matrix: %w", err)
	}
	return b.Bytes(), nil
}

// WorkflowOptions are what a GitHub workflow needs beside the cells.
type WorkflowOptions struct {
	// Args are the build flags every cell shares.
	Args []string
	// Version is the microshift-compose the workflow installs (go
	// install Package@Version): a release tag or a Go pseudo-version,
	// the planning microshift-compose's own, so that the jobs compose
	// with the catalog and release knowledge the cells were planned
	// with.
	Version string
}

// describedVersion is a `git describe` version (v1.2.3-4-gabcdef012345):
// a build between tags, which no module proxy serves.
var describedVersion = lazyregexp.New(`-[0-9]+-g[0-9a-f]+$`)

// InstallVersion checks that go install can fetch microshift-compose at
// version and returns it as Go spells it (v1.2.3).
func InstallVersion(version string) (string, error) {
	v := version
	if v != "" && !strings.HasPrefix(v, "v") {
		v = "v" + v // goreleaser's builds say 1.2.3
	}
	if _, err := semver.StrictNewVersion(strings.TrimPrefix(v, "v")); err != nil || strings.HasSuffix(v, "-dirty") || describedVersion.MatchString(v) {
		return "", fmt.Errorf("microshift-compose %s is no version go install can fetch (a release tag such as v1.2.3, or a Go pseudo-version of a pushed commit): the workflow installs the microshift-compose that planned the cells", version)
	}
	return v, nil
}

// workflowTemplate is the GitHub Actions workflow. Every value in it is
// JSON (a YAML flow scalar or mapping) or checked by ShellSafe. It is
// parsed on first use: the package does no work at init.
var workflowTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("workflow").Funcs(template.FuncMap{"json": func(v any) (string, error) {
		data, err := json.Marshal(v)
		return string(data), err
	}}).Parse(workflowText))
})

const workflowText = `# Written by 'microshift-compose matrix --emit github-workflow' ({{.Version}}).
# Commit it under .github/workflows/. Each job of the build matrix rebuilds
# one planned composition with microshift-compose {{.Version}} from this
# repository's checkout, fails unless the composition ID is the planned one
# (--expect-id), and uploads the cell's output directory as the artifact
# named after the cell.
name: microshift-compose matrix
"on":
  push:
  workflow_dispatch:
permissions:
  contents: read
jobs:
  install:
    name: install microshift-compose {{.Version}}
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-go@v5
        with:
          go-version: stable
          cache: false
      # The planning microshift-compose's own version, from the Go module
      # proxy, checked against the Go checksum database, built as its
      # Makefile builds it (no cgo, the pure-Go container code paths).
      - name: go install microshift-compose@{{.Version}}
        run: go install -trimpath -tags {{.Tags}} {{.Package}}@{{.Version}}
        env:
          CGO_ENABLED: "0"
          GOBIN: {{"${{ runner.temp }}/bin"}}
      - run: '"$RUNNER_TEMP/bin/microshift-compose" version'
      - uses: actions/upload-artifact@v4
        with:
          name: microshift-compose
          path: {{"${{ runner.temp }}/bin/microshift-compose"}}
          if-no-files-found: error
          retention-days: 1
  build:
    name: {{"${{ matrix.cell }}"}}
    needs: install
    runs-on: ubuntu-latest
    strategy:
      fail-fast: false
      matrix:
        include:
{{- range .Cells}}
          - {{json .}}
{{- end}}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/download-artifact@v4
        with:
          name: microshift-compose
          path: {{"${{ runner.temp }}/bin"}}
      - name: install microshift-compose
        run: |
          chmod +x "$RUNNER_TEMP/bin/microshift-compose"
          echo "$RUNNER_TEMP/bin" >> "$GITHUB_PATH"
      - name: build {{"${{ matrix.cell }}"}}
        run: microshift-compose build {{"${{ matrix.build_args }}"}} --output "out/{{"${{ matrix.cell }}"}}"
      - uses: actions/upload-artifact@v4
        with:
          name: {{"${{ matrix.cell }}"}}
          path: out/{{"${{ matrix.cell }}"}}
          if-no-files-found: error
`

// GitHubWorkflow renders the cells as a complete GitHub Actions workflow
// to commit: a job installing microshift-compose at opts.Version, and a
// build matrix whose jobs check the repository out, rebuild each cell with
// its build arguments (CellArgs; the ID checked), and upload its output
// directory as an artifact. The same conditions as GitHub hold.
func GitHubWorkflow(results []Result, opts WorkflowOptions) ([]byte, error) {
	version, err := InstallVersion(opts.Version)
	if err != nil {
		return nil, err
	}
	cells, err := githubCells(results, opts.Args)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = workflowTemplate().Execute(&b, struct {
		Version, Tags, Package string
		Cells                  []githubCell
	}{version, BuildTags, Package, cells})
	if err != nil {
		return nil, fmt.Errorf("writing the GitHub workflow: %w", err)
	}
	return b.Bytes(), nil
}

// TektonOptions are what a PipelineRun needs beside the cells.
type TektonOptions struct {
	// Image is the container image the tasks run microshift-compose in.
	Image string
	// Args are the build flags every cell shares (--with, --bootc...),
	// after the cell's own --profile, --arch and --release.
	Args []string
	// Claim is the PersistentVolumeClaim the output workspace binds: each
	// run writes <claim>/<PipelineRun name>/<cell>/, which outlives it.
	Claim string
}

// taskName is what a Tekton pipeline task name must be: a DNS-1123 label.
var taskName = lazyregexp.New(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Tekton renders the cells as a Tekton PipelineRun (tekton.dev/v1) with an
// embedded pipeline: one task per cell, all in parallel, each running
// 'microshift-compose build' for its cell, with --expect-id its planned ID,
// into the output workspace bound to opts.Claim, at
// <claim>/<PipelineRun name>/<cell>/. The pods run with fsGroup
// RunnerUser, the image's user. Every cell must have succeeded.
func Tekton(results []Result, opts TektonOptions) ([]byte, error) {
	if err := allOK(results); err != nil {
		return nil, err
	}
	if opts.Claim == "" {
		return nil, fmt.Errorf("no PersistentVolumeClaim for the output workspace: a volume claim template would take the outputs with it when the PipelineRun is deleted")
	}
	param := func(name, value string) map[string]any { return map[string]any{"name": name, "value": value} }
	cellParams := []string{"profile", "arch", "release", "cell", "id", "run"}
	var taskParams []any
	taskParams = append(taskParams, map[string]any{"name": "image", "type": "string", "description": "the container image with microshift-compose"})
	for _, n := range cellParams {
		taskParams = append(taskParams, map[string]any{"name": n, "type": "string"})
	}
	args := []any{"build", "--profile", "$(params.profile)", "--arch", "$(params.arch)", "--release", "$(params.release)"}
	for _, a := range opts.Args {
		args = append(args, a)
	}
	args = append(args, "--expect-id", "$(params.id)", "--output", "$(workspaces.output.path)/$(params.run)/$(params.cell)", "--format", "json")
	var tasks []any
	seen := map[string]string{}
	for _, r := range results {
		if r.ReleaseDir != "" {
			return nil, fmt.Errorf("cell %s: --emit tekton describes embedded releases only (the task has the image's releases, not --release-dir %s)", r.Cell, r.ReleaseDir)
		}
		name := "build-" + strings.NewReplacer(".", "-", "_", "-").Replace(strings.ToLower(r.Cell))
		if len(name) > 63 || !taskName.MatchString(name) {
			return nil, fmt.Errorf("cell %s: %q is no Tekton task name (a DNS-1123 label of at most 63 characters)", r.Cell, name)
		}
		if prev, dup := seen[name]; dup {
			return nil, fmt.Errorf("cells %s and %s are both Tekton task %s", prev, r.Cell, name)
		}
		seen[name] = r.Cell
		tasks = append(tasks, map[string]any{
			"name": name,
			"params": []any{
				param("image", "$(params.image)"), param("profile", r.Profile), param("arch", r.Arch),
				param("release", r.Release), param("cell", r.Cell), param("id", r.ID), param("run", "$(context.pipelineRun.name)"),
			},
			"workspaces": []any{map[string]any{"name": "output", "workspace": "output"}},
			"taskSpec": map[string]any{
				"params":     taskParams,
				"workspaces": []any{map[string]any{"name": "output", "description": "where <PipelineRun name>/<cell>/ is written"}},
				"steps": []any{map[string]any{
					"name":    "build",
					"image":   "$(params.image)",
					"command": []any{"microshift-compose"},
					"args":    args,
				}},
			},
		})
	}
	pr := map[string]any{
		"apiVersion": "tekton.dev/v1",
		"kind":       "PipelineRun",
		"metadata":   map[string]any{"generateName": "microshift-compose-matrix-"},
		"spec": map[string]any{
			"params": []any{param("image", opts.Image)},
			"workspaces": []any{map[string]any{
				"name":                  "output",
				"persistentVolumeClaim": map[string]any{"claimName": opts.Claim},
			}},
			"taskRunTemplate": map[string]any{
				"podTemplate": map[string]any{"securityContext": map[string]any{"fsGroup": RunnerUser}},
			},
			"pipelineSpec": map[string]any{
				"params":     []any{map[string]any{"name": "image", "type": "string", "description": "the container image with microshift-compose"}},
				"workspaces": []any{map[string]any{"name": "output"}},
				"tasks":      tasks,
			},
		},
	}
	out, err := yaml.Marshal(pr)
	if err != nil {
		return nil, fmt.Errorf("encoding the Tekton PipelineRun: %w", err)
	}
	return out, nil
}

// allOK refuses to describe a matrix with a failed cell: the engine would
// run a build that fails.
func allOK(results []Result) error {
	for _, r := range results {
		if r.Status != StatusOK {
			return fmt.Errorf("cell %s: %s", r.Cell, r.Error)
		}
	}
	return nil
}
