package compose_test

import (
	"context"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/releases"
)

// BenchmarkRenderManifests renders, in process with krusty, every
// manifest- and plugin-based component of the default catalog (plugins
// have run once, before the loop): the work `make bench` compares with
// running the kustomize CLI on the same directories.
func BenchmarkRenderManifests(b *testing.B) {
	jobs, err := compose.ManifestJobs(context.Background(), assembletest.Catalog(b), assembletest.Release(b, "5.0"), compose.EdgeLight(releases.X86_64))
	if err != nil {
		b.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].Component != "storage-hostpath" {
		b.Fatalf("%d manifest jobs, want storage-hostpath's", len(jobs))
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, j := range jobs {
			if _, err := j.Job.Render(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkResolveEdgeLight is the whole plan with rendering: selection,
// images, config and storage-hostpath's rendering.
func BenchmarkResolveEdgeLight(b *testing.B) {
	cat, rel := assembletest.Catalog(b), assembletest.Release(b, "5.0")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compose.Resolve(ctx, cat, rel, compose.EdgeLight(releases.X86_64)); err != nil {
			b.Fatal(err)
		}
	}
}
