package compose_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/releases"
)

// scaleCatalog is a synthetic catalog of n components for the resolver's
// scaling benchmarks: each component claims one image key of its own
// release file "bench" and requires the one before it (a chain n deep) or,
// with wide, core only; every tenth component also requires the "tpu"
// capability, which two components provide. The profile selects the last
// component (chain) or all of them (wide).
func scaleCatalog(tb testing.TB, n int, wide bool) (*components.Catalog, *releases.Release) {
	tb.Helper()
	cat := &components.Catalog{
		Components:   map[string]*components.Component{},
		Capabilities: map[string]*components.Capability{"tpu": {Name: "tpu", Default: "tpu-a", Description: "a TPU"}},
		Profiles:     map[string]*components.Profile{},
	}
	var core, bench strings.Builder
	core.WriteString(`{"release": {"base": "5.0.0"}, "images": {"pod": "quay.io/x/pod@sha256:` + strings.Repeat("a", 64) + `"`)
	bench.WriteString(`{"release": {"base": "5.0.0"}, "images": {`)
	add := func(c *components.Component) { cat.Components[c.Name] = c }
	add(&components.Component{Name: "core", Description: "core", Order: 0, Packages: []string{compose.MicroShiftPackage}, Images: components.Images{Keys: []string{"pod"}}})
	for _, p := range []string{"tpu-a", "tpu-b"} {
		add(&components.Component{Name: p, Description: p, Order: 1 + len(cat.Components), Provides: []string{"tpu"}, Requires: []string{"core"}})
	}
	var profile []string
	prev := "core"
	for i := range n {
		name := fmt.Sprintf("c%05d", i)
		key := fmt.Sprintf("k%05d", i)
		if i > 0 {
			bench.WriteString(", ")
		}
		fmt.Fprintf(&bench, `"%s": "quay.io/x/%s@sha256:%064x"`, key, name, i)
		req := []string{prev}
		if wide {
			req = []string{"core"}
		}
		if i%10 == 0 {
			req = append(req, "tpu")
		}
		add(&components.Component{Name: name, Description: name, Order: 10 + i%990, Requires: req,
			Images: components.Images{File: "bench", Keys: []string{key}}})
		if !wide {
			prev = name
		}
		if wide || i == n-1 {
			profile = append(profile, name)
		}
	}
	core.WriteString("}}")
	bench.WriteString("}}")
	cat.Profiles["scale"] = &components.Profile{Name: "scale", Description: "scale", Components: profile}
	var files []*releases.File
	for name, data := range map[string]string{"release-x86_64.json": core.String(), "release-bench-x86_64.json": bench.String()} {
		f, err := releases.ParseFile(name, name, []byte(data))
		if err != nil {
			tb.Fatal(err)
		}
		files = append(files, f)
	}
	rel, err := releases.New("bench", files)
	if err != nil {
		tb.Fatal(err)
	}
	return cat, rel
}

// BenchmarkResolveScale resolves synthetic catalogs of 100, 1,000 and
// 10,000 components, as a chain and wide; `make bench` fits the exponent.
func BenchmarkResolveScale(b *testing.B) {
	for _, shape := range []string{"chain", "wide"} {
		for _, n := range []int{100, 1000, 10000} {
			b.Run(fmt.Sprintf("%s/%d", shape, n), func(b *testing.B) {
				cat, rel := scaleCatalog(b, n, shape == "wide")
				b.ReportAllocs()
				for b.Loop() {
					p, err := compose.Resolve(context.Background(), cat, rel, compose.Request{Profile: "scale", Arch: releases.X86_64})
					if err != nil {
						b.Fatal(err)
					}
					if len(p.Components) != n+2 {
						b.Fatalf("%d components in the plan, want %d", len(p.Components), n+2)
					}
				}
			})
		}
	}
}

// BenchmarkCatalogProblems validates the same catalogs, as loading does.
func BenchmarkCatalogProblems(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			cat, _ := scaleCatalog(b, n, false)
			for b.Loop() {
				if probs := cat.Problems(); len(probs) != 0 {
					b.Fatal(probs[0])
				}
			}
		})
	}
}
