package matrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
)

// Emit formats.
const (
	EmitGitHub = "github"
	EmitTekton = "tekton"
)

// githubCell is one entry of the GitHub matrix's include list: a job's
// matrix.cell, matrix.profile, ...
type githubCell struct {
	CellRef
	// Args are the build flags every cell shares, as one string for
	// the job's command line (each a --flag=value without spaces or
	// shell syntax).
	Args string `json:"args"`
}

// GitHub renders the cells as a GitHub Actions strategy.matrix: one JSON
// line, {"include": [...]}, for a job to write into $GITHUB_OUTPUT and the
// build job to read with fromJSON (or to paste under strategy.matrix: JSON
// is YAML). Every cell must have succeeded.
// args are the build flags every cell shares.
func GitHub(results []Result, args []string) ([]byte, error) {
	if err := allOK(results); err != nil {
		return nil, err
	}
	m := struct {
		Include []githubCell `json:"include"`
	}{Include: make([]githubCell, len(results))}
	for i, r := range results {
		m.Include[i] = githubCell{CellRef: r.CellRef, Args: strings.Join(args, " ")}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encoding the GitHub matrix: %w", err)
	}
	return b.Bytes(), nil
}

// TektonOptions are what a PipelineRun needs beside the cells.
type TektonOptions struct {
	// Image is the container image the tasks run microshift-compose in.
	Image string
	// Args are the build flags every cell shares (--with, --catalog...),
	// after the cell's own --profile, --arch and --release.
	Args []string
}

// taskName is what a Tekton pipeline task name must be: a DNS-1123 label.
var taskName = lazyregexp.New(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Tekton renders the cells as a Tekton PipelineRun (tekton.dev/v1) with an
// embedded pipeline: one task per cell, all in parallel, each running
// 'microshift-compose build' for its cell into the output workspace,
// <workspace>/<cell>/. Every cell must have succeeded.
func Tekton(results []Result, opts TektonOptions) ([]byte, error) {
	if err := allOK(results); err != nil {
		return nil, err
	}
	param := func(name, value string) map[string]any { return map[string]any{"name": name, "value": value} }
	cellParams := []string{"profile", "arch", "release", "cell", "id"}
	var taskParams []any
	taskParams = append(taskParams, map[string]any{"name": "image", "type": "string", "description": "the container image with microshift-compose"})
	for _, n := range cellParams {
		taskParams = append(taskParams, map[string]any{"name": n, "type": "string"})
	}
	args := []any{"build", "--profile", "$(params.profile)", "--arch", "$(params.arch)", "--release", "$(params.release)"}
	for _, a := range opts.Args {
		args = append(args, a)
	}
	args = append(args, "--output", "$(workspaces.output.path)/$(params.cell)", "--format", "json")
	var tasks []any
	seen := map[string]string{}
	for _, r := range results {
		if r.ReleaseDir != "" {
			return nil, fmt.Errorf("cell %s: --emit tekton describes embedded releases only (the task cannot read --release-dir %s)", r.Cell, r.ReleaseDir)
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
				param("release", r.Release), param("cell", r.Cell), param("id", r.ID),
			},
			"workspaces": []any{map[string]any{"name": "output", "workspace": "output"}},
			"taskSpec": map[string]any{
				"params":     taskParams,
				"workspaces": []any{map[string]any{"name": "output", "description": "where the cell's output directory is written"}},
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
				"name": "output",
				"volumeClaimTemplate": map[string]any{"spec": map[string]any{
					"accessModes": []any{"ReadWriteOnce"},
					"resources":   map[string]any{"requests": map[string]any{"storage": "1Gi"}},
				}},
			}},
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
