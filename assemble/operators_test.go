package assemble_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/operators"
	"github.com/microshift-compose/microshift-compose/operators/operatorstest"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/render/healthcheck"
	"github.com/microshift-compose/microshift-compose/render/sbom"
)

func operatorChoices(t *testing.T, specs ...string) []operators.Choice {
	t.Helper()
	var out []operators.Choice
	for _, s := range specs {
		c, err := operators.ParseChoice(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// An operator set through every output: olm selected for it, the
// manifests.d directory and the greenboot check on the device, the
// filtered catalog's layout in the output, every image in images.txt, the
// blueprint (validated by osbuild) and the Containerfile, the bundles in
// both SBOMs (checked by their schemas), and the lock read back as it was
// written.
func TestOperatorSet(t *testing.T) {
	cat := assembletest.Catalog(t)
	rel := assembletest.Release(t, "5.0")
	catalog := operatorstest.Load(t, operatorstest.Sample(), releases.X86_64)
	req := compose.Request{Profile: "full", Arch: releases.X86_64, Operators: &compose.OperatorRequest{Catalog: catalog, Choices: operatorChoices(t, "prometheus", "hello-microshift-operator")}}
	p := assembletest.Plan(t, cat, rel, req)
	if c := p.Component("olm"); c == nil || c.Reasons[0].Kind != plan.ReasonOperators {
		t.Fatalf("olm is not selected for --operator: %+v", c)
	}
	if i := slices.IndexFunc(p.Manifests, func(m plan.Manifest) bool { return m.From == plan.FromOperators }); i < 0 || p.Manifests[i].Dir != "/etc/microshift/manifests.d/001-olm-operators/" {
		t.Errorf("no operators manifests.d directory: %+v", p.Manifests)
	}
	ws := healthcheck.OperatorWorkloads(p)
	var waits []string
	for _, w := range ws {
		waits = append(waits, w.Namespace+"/"+w.Name)
	}
	if want := []string{"monitoring/etcd-operator", "hello-microshift-operator/hello-microshift"}; !slices.Equal(waits, want) {
		t.Errorf("the greenboot check waits for %q, want %q", waits, want)
	}
	check := p.File(healthcheck.Path)
	if check == nil || !strings.Contains(string(check.Data), `"hello-microshift-operator":{"deployments":["hello-microshift"]}`) {
		t.Errorf("the greenboot check does not wait for the operators")
	}
	out := assembletest.Build(t, p, assemble.Options{Bootc: true, SBOM: sbom.Options{Formats: sbom.Formats}})
	files := assembletest.Files(out)
	images := string(files[output.ImagesFile])
	bp := string(files[output.BlueprintFile])
	cf := string(files[output.Containerfile])
	for _, im := range p.Images {
		if !strings.Contains(images, im.Ref+"\n") || !strings.Contains(bp, `"`+im.Ref+`"`) {
			t.Errorf("image %s is not in images.txt and the blueprint", im.Ref)
		}
	}
	if !strings.Contains(cf, output.ImagesFile) {
		t.Error("the Containerfile does not take images.txt")
	}
	// The layout: index.json names the filtered catalog; its blobs are
	// there, a kept layer copied from the catalog image.
	ops := p.Operators
	index := string(files[output.OperatorCatalogLayout+"/index.json"])
	if !strings.Contains(index, `"org.opencontainers.image.ref.name": "`+ops.Filtered.Ref+`"`) {
		t.Errorf("the layout's index.json does not name %s:\n%s", ops.Filtered.Ref, index)
	}
	digest := strings.TrimPrefix(ops.Filtered.Ref[strings.Index(ops.Filtered.Ref, "@")+1:], "sha256:")
	if len(files[output.OperatorCatalogLayout+"/blobs/sha256/"+digest]) == 0 {
		t.Error("the layout lacks the filtered catalog's manifest")
	}
	var streamed int
	for _, f := range out.Files {
		if f.Open != nil {
			streamed++
			if sum, size := f.Digest(); len(files[f.Path]) != int(size) || !strings.HasSuffix(f.Path, sum) {
				t.Errorf("%s: streamed %d bytes, want %d named by its digest", f.Path, len(files[f.Path]), size)
			}
		}
	}
	if streamed != ops.Filtered.KeptLayers {
		t.Errorf("%d files streamed, want the %d kept layers", streamed, ops.Filtered.KeptLayers)
	}
	// The SBOMs list each bundle, depending on its images.
	doc := testutil.CheckSPDX(t, output.SBOMFile, files[output.SBOMFile])
	bom := testutil.CheckCycloneDX(t, output.CycloneDXFile, files[output.CycloneDXFile])
	for _, o := range ops.Packages {
		found := false
		for _, pkg := range doc.Packages {
			found = found || (pkg.PackageName == o.Bundle && pkg.PackageVersion == o.Version && strings.Contains(pkg.PackageComment, "operator bundle "+o.Bundle))
		}
		if !found {
			t.Errorf("the SPDX SBOM does not list bundle %s", o.Bundle)
		}
		if !slices.ContainsFunc(*bom.Components, func(c cdx.Component) bool { return c.Name == o.Bundle && c.Version == o.Version }) {
			t.Errorf("the CycloneDX SBOM does not list bundle %s", o.Bundle)
		}
	}
	// The lock reads back as it was written.
	back, err := lockfile.Parse(output.LockFile, files[output.LockFile])
	if err != nil {
		t.Fatal(err)
	}
	want := *ops
	want.Filtered.Files = nil
	if !reflect.DeepEqual(*back.Operators, want) {
		t.Errorf("the lock's operators:\n%+v\nthe plan's:\n%+v", *back.Operators, want)
	}
	// A plan read from the lock names the layout but has none to write.
	if _, err := assemble.Build(context.Background(), back, assemble.Options{}); err == nil || !strings.Contains(err.Error(), "a plan read from a lock names it by digest only") {
		t.Errorf("Build of a lock's plan = %v", err)
	}
}

// The composition ID covers the operators asked for and the catalog's
// content, not how it was named: the default approval given or not is one
// composition, another package another.
func TestOperatorSetID(t *testing.T) {
	cat := assembletest.Catalog(t)
	rel := assembletest.Release(t, "5.0")
	catalog := operatorstest.Load(t, operatorstest.Sample(), releases.X86_64)
	id := func(specs ...string) string {
		req := compose.Request{Profile: "minimal", Arch: releases.X86_64, AllowRedBoot: true, Operators: &compose.OperatorRequest{Catalog: catalog, Choices: operatorChoices(t, specs...)}}
		return assembletest.Plan(t, cat, rel, req).ID
	}
	none := assembletest.Plan(t, cat, rel, compose.Request{Profile: "minimal", Arch: releases.X86_64, AllowRedBoot: true}).ID
	a := id("etcd", "prometheus")
	switch {
	case a != id("prometheus", "etcd,approval=Automatic"):
		t.Error("the order of --operator or the default approval spelt out changed the ID")
	case a == id("etcd", "prometheus,approval=Manual"):
		t.Error("another approval kept the ID")
	case a == id("etcd:alpha", "prometheus"), a == none:
		t.Error("another selection kept the ID")
	}
}
