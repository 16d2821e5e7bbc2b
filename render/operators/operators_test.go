package operators_test

import (
	"bytes"
	"flag"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/render/operators"
)

var update = flag.Bool("update", false, "rewrite golden files")

const filtered = "quay.io/example/catalog@sha256:1111111111111111111111111111111111111111111111111111111111111111"

// operatorPlan is a plan with core and olm and an operator set: prometheus
// asked for, with etcd its dependency in its namespace (OwnNamespace),
// and hello asked for in MicroShift's openshift-operators.
func operatorPlan() *plan.Plan {
	return &plan.Plan{
		Components: []plan.Component{{Name: "core", Order: 0}, {Name: "olm", Order: 1}},
		Operators: &plan.Operators{
			Catalog:  plan.OperatorCatalog{Source: "docker://quay.io/example/catalog:v1", Ref: "quay.io/example/catalog@sha256:" + strings.Repeat("2", 64)},
			Filtered: plan.FilteredCatalog{Ref: filtered, Layout: "operators/catalog"},
			Packages: []plan.OperatorPackage{
				{Name: "etcd", Channel: "stable", Bundle: "etcdoperator.v0.9.4", Version: "0.9.4", RequiredBy: "prometheus", Requirement: "olm.package.required etcd >=0.9.2", Namespace: "monitoring", InstallMode: plan.InstallOwnNamespace, Deployments: []string{"etcd-operator"}},
				{Name: "hello-microshift-operator", Channel: "alpha", Bundle: "hello-microshift-operator.v0.1.0", Version: "0.1.0", Namespace: "openshift-operators", Approval: plan.ApprovalManual, InstallMode: plan.InstallAllNamespaces},
				{Name: "prometheus", Channel: "beta", Bundle: "prometheusoperator.0.32.0", Version: "0.32.0", Namespace: "monitoring", Approval: plan.ApprovalAutomatic, InstallMode: plan.InstallOwnNamespace},
			},
		},
	}
}

// The manifests.d directory of an operator set: the CatalogSource of the
// filtered catalog by digest (restricted, as MicroShift requires), a
// Namespace and OperatorGroup for monitoring (none for openshift-operators,
// which MicroShift's own OperatorGroup covers), a Subscription per package
// asked for (none for the dependency, which OLM installs), in one
// kustomization after OLM's manifests.
func TestApply(t *testing.T) {
	p := operatorPlan()
	if err := operators.Apply(p); err != nil {
		t.Fatal(err)
	}
	if len(p.Manifests) != 1 || p.Manifests[0].Dir != "/etc/microshift/manifests.d/001-olm-operators/" || p.Manifests[0].From != plan.FromOperators {
		t.Fatalf("manifests %+v", p.Manifests)
	}
	// In kustomize's order: the Namespace first.
	wantResources := []string{
		"Namespace monitoring", "OperatorGroup monitoring/monitoring", "CatalogSource openshift-marketplace/microshift-compose-operators",
		"Subscription monitoring/prometheus", "Subscription openshift-operators/hello-microshift-operator",
	}
	if got := p.Manifests[0].Resources; fmt.Sprint(got) != fmt.Sprint(wantResources) {
		t.Errorf("resources %q\nwant %q", got, wantResources)
	}
	var all bytes.Buffer
	for _, f := range p.Files {
		fmt.Fprintf(&all, "# %s (%s)\n%s", f.Path, f.Mode, f.Data)
		if !strings.HasSuffix(f.Path, "kustomization.yaml") {
			var obj map[string]any
			if err := yaml.UnmarshalStrict(f.Data, &obj); err != nil {
				t.Errorf("%s: %v", f.Path, err)
			}
		}
	}
	testutil.Golden(t, "testdata/olm-operators.golden", all.Bytes(), *update, "go test ./render/operators -update")
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "Subscriptions of hello-microshift-operator in openshift-operators, prometheus in monitoring") {
		t.Errorf("notes %q", p.Notes)
	}
	// No operator set, no directory.
	empty := &plan.Plan{Components: []plan.Component{{Name: "core"}}}
	if err := operators.Apply(empty); err != nil || len(empty.Manifests)+len(empty.Files) != 0 {
		t.Errorf("Apply without operators: %v, %+v", err, empty)
	}
}

func TestApplyRefusals(t *testing.T) {
	noOLM := operatorPlan()
	noOLM.Components = noOLM.Components[:1]
	global := operatorPlan()
	global.Operators.Packages[1].InstallMode = plan.InstallOwnNamespace
	for _, tc := range []struct {
		name string
		p    *plan.Plan
		want string
	}{
		{"no olm", noOLM, "the plan has an operator set and no component olm to install it"},
		{"openshift-operators, own namespace", global, "namespace openshift-operators has MicroShift's OperatorGroup of all namespaces, and its operators need OwnNamespace"},
	} {
		if err := operators.Apply(tc.p); err == nil || err.Error() != tc.want {
			t.Errorf("%s: Apply = %v, want %q", tc.name, err, tc.want)
		}
	}
}
