// Command tektoncheck validates a Tekton PipelineRun with Tekton's own API
// types: it decodes the YAML on stdin strictly into v1.PipelineRun, applies
// Tekton's defaults and runs its Validate, printing every problem. The
// matrix tests run it on what 'matrix --emit tekton' prints.
//
// It is a module of its own so that the main go.mod does not take
// Tekton's (and Knative's, and Kubernetes') dependencies.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	v1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "tektoncheck:", err)
		os.Exit(1)
	}
}

func run(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	var pr v1.PipelineRun
	if err := yaml.UnmarshalStrict(data, &pr); err != nil {
		return fmt.Errorf("decoding PipelineRun: %w", err)
	}
	if pr.APIVersion != "tekton.dev/v1" || pr.Kind != "PipelineRun" {
		return fmt.Errorf("want apiVersion tekton.dev/v1, kind PipelineRun; got %s, %s", pr.APIVersion, pr.Kind)
	}
	// The API server names a generateName object before admission runs
	// Validate; do as it does.
	if pr.Name == "" && pr.GenerateName != "" {
		pr.Name = pr.GenerateName + "x7k2p"
	}
	ctx := context.Background()
	pr.SetDefaults(ctx)
	if ferr := pr.Validate(ctx); ferr != nil {
		return fmt.Errorf("invalid PipelineRun: %v", ferr)
	}
	fmt.Printf("valid: PipelineRun %s with %d tasks\n", pr.Name, len(pr.Spec.PipelineSpec.Tasks))
	return nil
}
