package matrix_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/matrix"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// FuzzEmit: whatever a cell is called, the GitHub matrix and workflow are
// refused when a value could not stand on a job's command line as it is,
// and otherwise give the cell back, its build arguments each one safe
// word; the PipelineRun is either refused or YAML whose task names are
// DNS labels.
func FuzzEmit(f *testing.F) {
	f.Add("5.0-full-x86_64", "full", "--with=multus")
	f.Add("4.19-a.b_c-aarch64", "a.b_c", "")
	f.Add("\"'\n${{ x }}", "$(params.x)", "--x=\"")
	f.Add("5.0-full-x86_64", "full", "--with=a b")
	f.Fuzz(func(t *testing.T, cell, profile, arg string) {
		r := []matrix.Result{{CellRef: matrix.CellRef{Cell: cell, Profile: profile, Arch: "x86_64", Release: "5.0", ID: "0f"}, Status: matrix.StatusOK}}
		safe := matrix.ShellSafe(cell) && matrix.ShellSafe(profile) && matrix.ShellSafe(arg)
		gh, err := matrix.GitHub(r, []string{arg})
		if (err == nil) != safe {
			t.Fatalf("GitHub(cell %q, profile %q, arg %q) = %v", cell, profile, arg, err)
		}
		wf, werr := matrix.GitHubWorkflow(r, matrix.WorkflowOptions{Args: []string{arg}, Version: "v1.0.0"})
		if (werr == nil) != safe {
			t.Fatalf("GitHubWorkflow(cell %q, profile %q, arg %q) = %v", cell, profile, arg, werr)
		}
		if safe {
			var m struct {
				Include []map[string]string `json:"include"`
			}
			if err := json.Unmarshal(gh, &m); err != nil || len(m.Include) != 1 || m.Include[0]["cell"] != cell || m.Include[0]["profile"] != profile {
				t.Fatalf("GitHub() = %q does not give the cell back: %v", gh, err)
			}
			args := strings.Split(m.Include[0]["build_args"], " ")
			if !slices.Equal(args, matrix.CellArgs(r[0], []string{arg})) || !slices.ContainsFunc(args, func(a string) bool { return a == profile }) {
				t.Fatalf("GitHub() build_args %q", m.Include[0]["build_args"])
			}
			var w struct {
				Jobs struct {
					Build struct {
						Strategy struct {
							Matrix struct {
								Include []map[string]string `json:"include"`
							} `json:"matrix"`
						} `json:"strategy"`
					} `json:"build"`
				} `json:"jobs"`
			}
			if err := yaml.Unmarshal(wf, &w); err != nil || len(w.Jobs.Build.Strategy.Matrix.Include) != 1 || w.Jobs.Build.Strategy.Matrix.Include[0]["build_args"] != m.Include[0]["build_args"] {
				t.Fatalf("GitHubWorkflow() = %q does not give the cell back: %v", wf, err)
			}
		}
		tk, err := matrix.Tekton(r, matrix.TektonOptions{Image: "quay.io/x/y:1", Args: []string{arg}, Claim: "c"})
		if err != nil {
			return
		}
		var pr struct {
			Spec struct {
				PipelineSpec struct {
					Tasks []struct {
						Name string `json:"name"`
					} `json:"tasks"`
				} `json:"pipelineSpec"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(tk, &pr); err != nil || len(pr.Spec.PipelineSpec.Tasks) != 1 || !dnsLabel.MatchString(pr.Spec.PipelineSpec.Tasks[0].Name) {
			t.Fatalf("Tekton() = %q: %v", tk, err)
		}
	})
}
