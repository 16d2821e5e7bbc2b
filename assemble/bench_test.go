package assemble_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/write"
)

// BenchmarkBuildFull runs what `build --profile full --arch x86_64 --output
// DIR` does, in-process: load the catalog and the newest embedded release,
// plan (resolve and render the device files), render and validate with
// osbuild, and write (replacing the previous iteration's output). Loading
// is cached per process, as in the binary, so the first iteration pays
// for it.
func BenchmarkBuildFull(b *testing.B) {
	ctx := context.Background()
	dir := filepath.Join(b.TempDir(), "out")
	b.ReportAllocs()
	for b.Loop() {
		cat, err := components.Default()
		if err != nil {
			b.Fatal(err)
		}
		rel, err := releases.Load("", "")
		if err != nil {
			b.Fatal(err)
		}
		p, err := assemble.Plan(ctx, cat, rel, compose.Request{Profile: "full", Arch: releases.X86_64})
		if err != nil {
			b.Fatal(err)
		}
		out, err := assemble.Build(ctx, p, assemble.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := write.Write(ctx, dir, out); err != nil {
			b.Fatal(err)
		}
	}
}
