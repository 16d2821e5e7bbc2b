package airgap_test

import (
	"reflect"
	"testing"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// TestFootprint checks the attribution of shared blobs on a plan of three
// components: core's two images share a base with storage's image; the
// networking image is used by two components.
func TestFootprint(t *testing.T) {
	reg := testutil.NewFaultyRegistry(t)
	p := &testutil.Pusher{Host: reg.Host}
	base := testutil.NewLayer(1, 10000)
	l := func(seed uint64, size int64) testutil.Layer { return testutil.NewLayer(seed, size) }
	push := func(path string, layers ...testutil.Layer) (string, int64) {
		ref, err := p.PushImage(path, "amd64", layers)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := testutil.Image("amd64", layers)
		n := int64(len(cfg.Data))
		for _, x := range layers {
			n += x.Desc.Size
		}
		return ref, n
	}
	cli, own1 := l(2, 3000), l(3, 4000)
	refA, sizeA := push("core/a", base, cli)
	refB, sizeB := push("core/b", base, own1)
	lvms, sizeL := push("storage/lvms", base, l(4, 5000))
	// An index: footprint takes the amd64 manifest's blobs.
	ovnAMD := []testutil.Layer{l(5, 6000)}
	ovn, children, err := p.PushIndex("net/ovn", []string{"amd64", "arm64"}, map[string][]testutil.Layer{"amd64": ovnAMD, "arm64": {l(6, 7000)}})
	if err != nil {
		t.Fatal(err)
	}
	ovnCfg, _ := testutil.Image("amd64", ovnAMD)
	sizeO := int64(len(ovnCfg.Data)) + ovnAMD[0].Desc.Size

	pl := &plan.Plan{
		Arch: "x86_64",
		Components: []plan.Component{
			{Name: "core"}, {Name: "networking"}, {Name: "storage"}, {Name: "multus"}, {Name: "no-images"},
		},
		Images: []plan.Image{
			{Ref: refA, Uses: []plan.ImageUse{{Component: "core"}}},
			{Ref: refB, Uses: []plan.ImageUse{{Component: "core"}}},
			{Ref: lvms, Uses: []plan.ImageUse{{Component: "storage"}}},
			{Ref: ovn, Uses: []plan.ImageUse{{Component: "networking"}, {Component: "multus"}}},
		},
	}
	fp, err := airgap.Footprint(ctx, pl, airgap.Options{Arch: releases.X86_64})
	if err != nil {
		t.Fatalf("Footprint() = %v", err)
	}
	// Core's images share the base with storage: it is in neither's unique bytes.
	uniqueCore := sizeA + sizeB - 2*base.Desc.Size
	want := &plan.Footprint{
		Images: []plan.ImageFootprint{
			{Ref: refA, Manifest: digestOf(refA), Blobs: 3, Compressed: sizeA},
			{Ref: refB, Manifest: digestOf(refB), Blobs: 3, Compressed: sizeB},
			{Ref: lvms, Manifest: digestOf(lvms), Blobs: 3, Compressed: sizeL},
			{Ref: ovn, Manifest: digestOf(children["amd64"]), Blobs: 2, Compressed: sizeO},
		},
		Components: []plan.ComponentFootprint{
			{Name: "core", Images: 2, Compressed: sizeA + sizeB - base.Desc.Size, Unique: uniqueCore},
			{Name: "networking", Images: 1, Compressed: sizeO, Unique: 0},
			{Name: "storage", Images: 1, Compressed: sizeL, Unique: sizeL - base.Desc.Size},
			{Name: "multus", Images: 1, Compressed: sizeO, Unique: 0},
		},
		SharedBetweenComponents: base.Desc.Size + sizeO,
		Total: plan.FootprintTotal{
			Images:     4,
			Blobs:      9, // base, 2 own layers + 2 configs (core), 1 layer + config (storage), 1 layer + config (ovn)
			Compressed: sizeA + sizeB + sizeL + sizeO,
			Unique:     sizeA + sizeB + sizeL + sizeO - 2*base.Desc.Size,
		},
	}
	if !reflect.DeepEqual(fp, want) {
		t.Errorf("Footprint() =\n%+v\nwant\n%+v", fp, want)
	}
	var uniques int64
	for _, c := range fp.Components {
		uniques += c.Unique
	}
	if uniques+fp.SharedBetweenComponents != fp.Total.Unique {
		t.Errorf("component unique bytes %d + shared %d != total unique %d", uniques, fp.SharedBetweenComponents, fp.Total.Unique)
	}
}

func digestOf(ref string) string {
	for i := len(ref) - 1; i >= 0; i-- {
		if ref[i] == '@' {
			return ref[i+1:]
		}
	}
	return ""
}
