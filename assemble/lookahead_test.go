package assemble_test

import (
	"cmp"
	"context"
	"fmt"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// TestLookAheadTarget: what LookAhead looks up before resolving is what
// Build looks up after it (the resolved target's distro, and the image
// type asked for or the target's), for every embedded release, each of
// its distros and none, with and without --image-type; for a distro the
// release is not built for, it looks up nothing and resolving refuses.
func TestLookAheadTarget(t *testing.T) {
	cat := assembletest.Catalog(t)
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	know, err := knowledge.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range rels {
		facts, err := know.For(rel.Version)
		if err != nil {
			t.Fatal(err)
		}
		distros := []string{""}
		for _, d := range facts.Distros {
			distros = append(distros, d.Name)
		}
		for _, distro := range distros {
			for _, imageType := range []string{"", "image-installer"} {
				t.Run(fmt.Sprintf("%s/%s/%s", rel.Stream(), cmp.Or(distro, "default"), cmp.Or(imageType, "default")), func(t *testing.T) {
					req := compose.Request{Profile: "full", Arch: releases.X86_64, Distro: distro}
					p := assembletest.Plan(t, cat, rel, req)
					gotDistro, gotType := assemble.LookAheadTarget(rel, req, imageType)
					wantType := cmp.Or(imageType, p.Target.ImageType)
					if gotDistro != p.Target.Distro || gotType != wantType {
						t.Errorf("LookAheadTarget() = %q, %q; the plan's target is %q, %q", gotDistro, gotType, p.Target.Distro, wantType)
					}
				})
			}
		}
	}
	t.Run("unknown distro", func(t *testing.T) {
		rel := assembletest.Release(t, "4.20")
		req := compose.Request{Profile: "full", Arch: releases.X86_64, Distro: "rhel-9.5"}
		if d, it := assemble.LookAheadTarget(rel, req, ""); d != "" || it != "" {
			t.Errorf("LookAheadTarget() = %q, %q, want nothing to look up", d, it)
		}
		if _, err := assemble.Plan(context.Background(), cat, rel, req); err == nil {
			t.Errorf("Plan(--distro rhel-9.5) = nil error, want it refused")
		}
	})
}
