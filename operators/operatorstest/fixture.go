package operatorstest

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/microshift-compose/microshift-compose/operators"
)

// Ref is a digest reference to a made-up image: repo@sha256 of seed.
func Ref(repo, seed string) string {
	sum := sha256.Sum256([]byte(seed))
	return repo + "@sha256:" + hex.EncodeToString(sum[:])
}

// EtcdGVK is the API the sample catalog's etcd provides and prometheus
// requires.
var EtcdGVK = operators.GVK{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"}

// Sample is a catalog shaped like the community operator index, with made-up
// digests: etcd (stable 0.9.0 -> 0.9.2 -> 0.9.4, alpha 0.9.4 -> 0.10.0-rc.1),
// prometheus (beta 0.27.0 -> 0.32.0; 0.32.0 requires etcd >=0.9.2 and the
// EtcdCluster API), and hello (MicroShift's own test operator's shape: one
// bundle of objects alone, no bundle image, one channel alpha).
func Sample() *Catalog {
	c := &Catalog{}
	c.Package("etcd", "stable")
	c.Channel("etcd", "stable", Chain("etcdoperator.v0.9.0", "etcdoperator.v0.9.2", "etcdoperator.v0.9.4")...)
	c.Channel("etcd", "alpha", Chain("etcdoperator.v0.9.4", "etcdoperator.v0.10.0-rc.1")...)
	for _, v := range []string{"0.9.0", "0.9.2", "0.9.4", "0.10.0-rc.1"} {
		c.Bundle(Bundle{
			Package: "etcd", Name: "etcdoperator.v" + v, Version: v,
			Image:    Ref("quay.io/example/etcd-bundle", v),
			Related:  []operators.RelatedImage{{Name: "etcd-operator", Image: Ref("quay.io/coreos/etcd-operator", v)}, {Name: "etcd", Image: Ref("quay.io/coreos/etcd", "3.5")}},
			Provides: []operators.GVK{EtcdGVK},
			CSV:      &CSV{Deployments: []string{"etcd-operator"}, InstallModes: []string{operators.InstallOwnNamespace, operators.InstallSingleNamespace}},
		})
	}
	c.Package("prometheus", "beta")
	c.Channel("prometheus", "beta", Chain("prometheusoperator.0.27.0", "prometheusoperator.0.32.0")...)
	c.Bundle(Bundle{
		Package: "prometheus", Name: "prometheusoperator.0.27.0", Version: "0.27.0",
		Image:    Ref("quay.io/example/prometheus-bundle", "0.27.0"),
		Related:  []operators.RelatedImage{{Name: "prometheus-operator", Image: Ref("quay.io/prometheus-operator/prometheus-operator", "0.27.0")}},
		Metadata: &CSV{InstallModes: []string{operators.InstallOwnNamespace, operators.InstallAllNamespaces}, SuggestedNamespace: "monitoring"},
	})
	c.Bundle(Bundle{
		Package: "prometheus", Name: "prometheusoperator.0.32.0", Version: "0.32.0",
		Image:            Ref("quay.io/example/prometheus-bundle", "0.32.0"),
		Related:          []operators.RelatedImage{{Name: "prometheus-operator", Image: Ref("quay.io/prometheus-operator/prometheus-operator", "0.32.0")}, {Name: "", Image: Ref("quay.io/prometheus/prometheus", "2.0")}},
		RequiresPackages: []operators.PackageRequirement{{Package: "etcd", Range: ">=0.9.2 <0.10.0"}},
		RequiresGVKs:     []operators.GVK{EtcdGVK},
		Metadata:         &CSV{InstallModes: []string{operators.InstallOwnNamespace, operators.InstallAllNamespaces}, SuggestedNamespace: "monitoring"},
	})
	c.Package("hello-microshift-operator", "alpha")
	c.Channel("hello-microshift-operator", "alpha", operators.Entry{Name: "hello-microshift-operator.v0.1.0"})
	c.Bundle(Bundle{
		Package: "hello-microshift-operator", Name: "hello-microshift-operator.v0.1.0", Version: "0.1.0",
		Related: []operators.RelatedImage{{Name: "busybox", Image: Ref("quay.io/microshift/busybox", "1.36")}},
		CSV:     &CSV{Deployments: []string{"hello-microshift"}, InstallModes: []string{operators.InstallOwnNamespace, operators.InstallSingleNamespace, operators.InstallAllNamespaces}, Images: []string{Ref("quay.io/microshift/busybox", "1.36")}},
	})
	return c
}
