package operatorstest

import (
	"fmt"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/operators"
)

// Layers of the pushed sample's images: each image is a base layer its
// repository's images share and a layer of its own.
var (
	bundleBase   = testutil.NewLayer(100, 8<<10)
	operatorBase = testutil.NewLayer(200, 64<<10)
)

// PushedImages are the references of what Pushed pushed.
type PushedImages struct {
	// EtcdBundle and EtcdOperator are the etcd bundle and operator images
	// by version.
	EtcdBundle, EtcdOperator map[string]string
	// Own are the layers of an etcd version's images alone (bundle,
	// operator), which a bundle of that version carries.
	Own                                  map[string][]testutil.Layer
	Etcd, PrometheusBundle, PrometheusOp string
}

// Pushed is a catalog of etcd (channel stable, default: etcdVersions in
// order, each replacing the one before) and prometheus (channel beta:
// 0.32.0, requiring etcd >=0.9.2 <0.10.0 and its EtcdCluster API,
// suggesting namespace monitoring), whose bundle and related images are
// pushed to p's registry under example/; both CSVs are in the catalog
// (olm.bundle.object).
func Pushed(t testing.TB, p *testutil.Pusher, etcdVersions ...string) (*Catalog, PushedImages) {
	t.Helper()
	push := func(repo string, seed uint64, size int64, base testutil.Layer) (string, testutil.Layer) {
		own := testutil.NewLayer(seed, size)
		ref, err := p.PushImage("example/"+repo, "amd64", []testutil.Layer{base, own})
		if err != nil {
			t.Fatal(err)
		}
		return ref, own
	}
	im := PushedImages{EtcdBundle: map[string]string{}, EtcdOperator: map[string]string{}, Own: map[string][]testutil.Layer{}}
	im.Etcd, _ = push("etcd", 300, 32<<10, operatorBase)
	im.PrometheusBundle, _ = push("prometheus-bundle", 400, 4<<10, bundleBase)
	im.PrometheusOp, _ = push("prometheus-operator", 401, 48<<10, operatorBase)
	c := &Catalog{}
	c.Package("etcd", "stable")
	var names []string
	for i, v := range etcdVersions {
		name := "etcdoperator.v" + v
		names = append(names, name)
		b, bl := push("etcd-bundle", uint64(110+i), 4<<10, bundleBase)
		o, ol := push("etcd-operator", uint64(210+i), 40<<10, operatorBase)
		im.EtcdBundle[v], im.EtcdOperator[v], im.Own[v] = b, o, []testutil.Layer{bl, ol}
		c.Bundle(Bundle{
			Package: "etcd", Name: name, Version: v, Image: b,
			Related:  []operators.RelatedImage{{Name: "etcd-operator", Image: o}, {Name: "etcd", Image: im.Etcd}},
			Provides: []operators.GVK{EtcdGVK},
			CSV: &CSV{Deployments: []string{"etcd-operator"}, InstallModes: []string{operators.InstallOwnNamespace, operators.InstallSingleNamespace},
				Images: []string{o}},
		})
	}
	c.Channel("etcd", "stable", Chain(names...)...)
	c.Package("prometheus", "beta")
	c.Channel("prometheus", "beta", operators.Entry{Name: "prometheusoperator.0.32.0"})
	c.Bundle(Bundle{
		Package: "prometheus", Name: "prometheusoperator.0.32.0", Version: "0.32.0", Image: im.PrometheusBundle,
		Related:          []operators.RelatedImage{{Name: "prometheus-operator", Image: im.PrometheusOp}},
		RequiresPackages: []operators.PackageRequirement{{Package: "etcd", Range: ">=0.9.2 <0.10.0"}},
		RequiresGVKs:     []operators.GVK{EtcdGVK},
		CSV: &CSV{Deployments: []string{"prometheus-operator"}, InstallModes: []string{operators.InstallOwnNamespace, operators.InstallAllNamespaces},
			SuggestedNamespace: "monitoring", Images: []string{im.PrometheusOp}},
	})
	return c, im
}

// PushIndex pushes c as a catalog index of amd64 and arm64 images (the
// configs a file per package, opm's cache layer) to p's registry as
// example/operator-index:tag, and returns the index and the amd64 image.
func PushIndex(t testing.TB, p *testutil.Pusher, c *Catalog, tag string) (Index, Built) {
	t.Helper()
	x := Index{Arches: []string{"amd64", "arm64"}, Images: map[string]Built{}}
	for _, a := range x.Arches {
		x.Images[a] = Image(a, ImageOptions{Files: c.PerPackage(false), Cache: true})
	}
	if ref := x.Push(t, p, "example/operator-index", tag); ref == "" {
		t.Fatal(fmt.Errorf("pushing the index gave no reference"))
	}
	return x, x.Images["amd64"]
}
