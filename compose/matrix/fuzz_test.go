package matrix_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/compose/matrix"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// FuzzEmit: whatever a cell is called, the GitHub matrix is JSON that
// gives the cell back, and the PipelineRun is either refused or YAML whose
// task names are DNS labels.
func FuzzEmit(f *testing.F) {
	f.Add("5.0-full-x86_64", "full", "--with=multus")
	f.Add("4.19-a.b_c-aarch64", "a.b_c", "")
	f.Add("\"'\n${{ x }}", "$(params.x)", "--x=\"")
	f.Fuzz(func(t *testing.T, cell, profile, arg string) {
		r := []matrix.Result{{CellRef: matrix.CellRef{Cell: cell, Profile: profile, Arch: "x86_64", Release: "5.0", ID: "0f"}, Status: matrix.StatusOK}}
		gh, err := matrix.GitHub(r, []string{arg})
		if err != nil {
			t.Fatalf("GitHub() = %v", err)
		}
		var m struct {
			Include []map[string]string `json:"include"`
		}
		if err := json.Unmarshal(gh, &m); err != nil || len(m.Include) != 1 || m.Include[0]["cell"] != cell || m.Include[0]["profile"] != profile {
			t.Fatalf("GitHub() = %q does not give the cell back: %v", gh, err)
		}
		tk, err := matrix.Tekton(r, matrix.TektonOptions{Image: "quay.io/x/y:1", Args: []string{arg}})
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
