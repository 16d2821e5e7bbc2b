package airgap_test

import (
	"context"
	"io"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/operators"
	"github.com/microshift-compose/microshift-compose/operators/operatorstest"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// A plan's filtered operator catalog, which no registry has, is read
// where build put it: mirror copies it from the output's layout with the
// plan's other images from their registry, and Footprint measures it from
// the plan's files before they are written, as from the layout after.
func TestBuiltLayout(t *testing.T) {
	ctx := context.Background()
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	catalog := operatorstest.Load(t, operatorstest.Sample(), releases.X86_64)
	res, err := catalog.Filter(ctx, []operators.Choice{{Package: "etcd"}}, operators.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := catalog.Layout(res.Filtered)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var planFiles []plan.LayoutFile
	for _, lf := range files {
		pf := plan.LayoutFile{Path: lf.Path, Data: lf.Data}
		data := lf.Data
		if lf.Blob != nil {
			d := *lf.Blob
			pf.Open = func() (io.ReadCloser, error) { return catalog.OpenBlob(d) }
			pf.SHA256, pf.Size = d.Digest.Hex, d.Size
			rc, err := catalog.OpenBlob(d)
			if err != nil {
				t.Fatal(err)
			}
			data, _ = io.ReadAll(rc)
			rc.Close()
		}
		planFiles = append(planFiles, pf)
		testutil.WriteFile(t, filepath.Join(out, "operators", "catalog", filepath.FromSlash(lf.Path)), data)
	}
	router := f.byName["router"]
	p := &plan.Plan{Arch: "x86_64", Components: []plan.Component{{Name: "core"}, {Name: "olm"}},
		Images: []plan.Image{
			{Ref: res.Filtered.Ref, Pinned: true, Uses: []plan.ImageUse{{Component: "olm", File: "operators", Key: "catalog"}}},
			{Ref: router, Pinned: true, Uses: []plan.ImageUse{{Component: "core"}}},
		},
		Operators: &plan.Operators{Filtered: plan.FilteredCatalog{Ref: res.Filtered.Ref, Layout: "operators/catalog", Files: planFiles}},
	}
	built, ok := airgap.BuiltLayout(filepath.Join(out, "compose.lock.json"), p)
	if !ok || built.Path != filepath.Join(out, "operators", "catalog") {
		t.Fatalf("BuiltLayout = %v, %v", built, ok)
	}
	dest := filepath.Join(t.TempDir(), "images")
	o := opts(releases.X86_64, nil)
	o.Built = []airgap.Target{built}
	if _, err := airgap.Mirror(ctx, p.ImageRefs(), airgap.Target{Transport: airgap.TransportOCI, Path: dest}, o); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, d := range readIndex(t, dest).Manifests {
		names[d.Annotations["org.opencontainers.image.ref.name"]] = true
	}
	if !names[res.Filtered.Ref] || !names[router] {
		t.Errorf("the layout names %v, want the filtered catalog and the router", names)
	}
	// Without the build's layout, the registry is asked, and has it not.
	if _, err := airgap.Mirror(ctx, []string{res.Filtered.Ref}, airgap.Target{Transport: airgap.TransportOCI, Path: filepath.Join(t.TempDir(), "x")}, opts(releases.X86_64, nil)); err == nil {
		t.Error("the filtered catalog was found without the layout build wrote")
	}
	// Footprint: the plan's files, then the written layout.
	fp, err := airgap.Footprint(ctx, p, opts(releases.X86_64, nil))
	if err != nil {
		t.Fatal(err)
	}
	fromLock := *p
	fromLock.Operators = &plan.Operators{Filtered: plan.FilteredCatalog{Ref: res.Filtered.Ref, Layout: "operators/catalog"}}
	fp2, err := airgap.Footprint(ctx, &fromLock, o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fp, fp2) || fp.Images[0].Compressed == 0 {
		t.Errorf("footprint from the plan's files %+v, from the layout %+v", fp.Images, fp2.Images)
	}
}
