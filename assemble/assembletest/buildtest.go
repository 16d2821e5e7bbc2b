// Package assembletest holds the fixtures the tests of the resolving, rendering
// and writing packages share: the embedded catalog and releases, a plan
// resolved from them, and a build of it, each failing the test on error.
//
// It is for tests only: no package of the binary imports it.
package assembletest

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// Catalog is the embedded catalog.
func Catalog(t testing.TB) *components.Catalog {
	t.Helper()
	cat, err := components.Default()
	if err != nil {
		t.Fatalf("components.Default() = %v", err)
	}
	return cat
}

// Release is the embedded release of stream ("5.0").
func Release(t testing.TB, stream string) *releases.Release {
	t.Helper()
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatalf("releases.Embedded() = %v", err)
	}
	rel, err := releases.Select(rels, stream)
	if err != nil {
		t.Fatalf("releases.Select(%q) = %v", stream, err)
	}
	if rel.Stream() != stream {
		t.Fatalf("releases.Select(%q) picked %s", stream, rel.Stream())
	}
	return rel
}

// Plan resolves req against cat and rel: the plan every output is made
// from.
func Plan(t testing.TB, cat *components.Catalog, rel *releases.Release, req compose.Request) *plan.Plan {
	t.Helper()
	p, err := assemble.Plan(context.Background(), cat, rel, req)
	if err != nil {
		t.Fatalf("Plan(%s %s %+v) = %v", rel.Stream(), req.Arch, req, err)
	}
	return p
}

// Build renders every output of p with opts.
func Build(t testing.TB, p *plan.Plan, opts assemble.Options) *output.Dir {
	t.Helper()
	out, err := assemble.Build(context.Background(), p, opts)
	if err != nil {
		t.Fatalf("Build(%s %s %s) = %v", p.Release.Stream, p.Profile, p.Arch, err)
	}
	return out
}

// File is the output file at path, failing the test when there is none.
func File(t testing.TB, out *output.Dir, path string) []byte {
	t.Helper()
	f := out.File(path)
	if f == nil {
		var have []string
		for _, f := range out.Files {
			have = append(have, f.Path)
		}
		t.Fatalf("output has no %s (have %s)", path, strings.Join(have, ", "))
	}
	return f.Data
}

// Files maps a build's output paths to their bytes (a streamed file's
// read).
func Files(out *output.Dir) map[string][]byte {
	files := make(map[string][]byte, len(out.Files))
	for _, f := range out.Files {
		files[f.Path] = f.Data
		if f.Open != nil {
			if rc, err := f.Open(); err == nil {
				files[f.Path], _ = io.ReadAll(rc)
				rc.Close()
			}
		}
	}
	return files
}
