package main

import (
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan/request/schema"
)

// compositionFlagHelp is a flag's help as the commands say it: a matrix
// list's from matrix, the others' from build (or mirror, for its own).
func compositionFlagHelp(flag string, list bool) string {
	if list {
		if f := newMatrixCmd().Flags().Lookup(flag); f != nil {
			return f.Usage
		}
		return ""
	}
	for _, cmd := range []func() *cobra.Command{newBuildCmd, newMatrixCmd, newMirrorCmd} {
		if f := cmd().Flags().Lookup(flag); f != nil {
			return f.Usage
		}
	}
	return ""
}

// TestCompositionSchemaUpToDate regenerates the composition file's JSON
// Schema from request.Request and the flags' help and compares it with
// docs/composition.schema.json; -update-docs (make docs) rewrites it.
func TestCompositionSchemaUpToDate(t *testing.T) {
	got, err := schema.Generate(compositionFlagHelp)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join(root(t), "docs", "composition.schema.json"), got, *updateDocs, "make docs")
}
