package compose_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/operators"
	"github.com/microshift-compose/microshift-compose/operators/operatorstest"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

func operatorRequest(t *testing.T, specs ...string) *compose.OperatorRequest {
	t.Helper()
	r := &compose.OperatorRequest{Catalog: operatorstest.Load(t, operatorstest.Sample(), releases.X86_64)}
	for _, s := range specs {
		c, err := operators.ParseChoice(s)
		if err != nil {
			t.Fatal(err)
		}
		r.Choices = append(r.Choices, c)
	}
	return r
}

// The operators step alone: the operator set in the plan (bundles,
// dependencies, namespaces, install modes, the deployments greenboot
// waits for), the filtered catalog's layout, and the filtered catalog,
// bundle and related images among the plan's images, merged and sorted.
func TestStepOperators(t *testing.T) {
	pod := "quay.io/x/pod@sha256:" + strings.Repeat("a", 64)
	before := selectedPlan("full", "core", "olm")
	before.Images = []plan.Image{{Ref: pod, Pinned: true, Uses: []plan.ImageUse{{Component: "core", File: "release-x86_64.json", Key: "pod"}}}}
	req := compose.Request{Profile: "full", Operators: operatorRequest(t, "prometheus", "hello-microshift-operator,approval=Manual")}
	p, err := runStep(t, "operators", nil, stepRelease(t, "5.0.0", false), req, before)
	if err != nil {
		t.Fatal(err)
	}
	ops := p.Operators
	if ops == nil {
		t.Fatal("no operators in the plan")
	}
	type pkg struct{ name, bundle, ns, approval, mode, requiredBy string }
	var got []pkg
	for _, o := range ops.Packages {
		got = append(got, pkg{o.Name, o.Bundle, o.Namespace, o.Approval, o.InstallMode, o.RequiredBy})
	}
	want := []pkg{
		{"etcd", "etcdoperator.v0.9.4", "monitoring", "", "OwnNamespace", "prometheus"},
		{"hello-microshift-operator", "hello-microshift-operator.v0.1.0", "hello-microshift-operator", "Manual", "AllNamespaces", ""},
		{"prometheus", "prometheusoperator.0.32.0", "monitoring", "Automatic", "OwnNamespace", ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("packages:\n%+v\nwant\n%+v", got, want)
	}
	// etcd's CSV is in the catalog; prometheus has its metadata only, and
	// hello's Subscription waits for a manual approval.
	if d := ops.Packages[0].Deployments; !slices.Equal(d, []string{"etcd-operator"}) {
		t.Errorf("etcd deployments %q", d)
	}
	if ops.Packages[1].Deployments != nil || ops.Packages[2].Deployments != nil {
		t.Errorf("deployments waited for without an install strategy or with a manual approval: %+v", ops.Packages)
	}
	for _, n := range []string{"no install strategy of bundle prometheusoperator.0.32.0", "namespace hello-microshift-operator has a Subscription with installPlanApproval Manual"} {
		if !slices.ContainsFunc(p.Notes, func(s string) bool { return strings.Contains(s, n) }) {
			t.Errorf("no note saying %q in %q", n, p.Notes)
		}
	}
	if !strings.HasPrefix(ops.Filtered.Ref, operatorstest.SampleRepository+"@sha256:") || ops.Filtered.Layout != "operators/catalog" || ops.Filtered.KeptLayers != 1 || ops.Filtered.DroppedLayers != 2 {
		t.Errorf("filtered catalog %+v", ops.Filtered)
	}
	if len(ops.Filtered.Files) == 0 {
		t.Error("no layout files to write")
	}
	var refs []string
	for _, im := range p.Images {
		refs = append(refs, im.Ref)
		for _, u := range im.Uses {
			if im.Ref != pod && (u.Component != "olm" || u.File != "operators") {
				t.Errorf("image %s used by %+v, want component olm, file operators", im.Ref, u)
			}
		}
	}
	if !slices.IsSorted(refs) {
		t.Errorf("images not sorted: %q", refs)
	}
	keys := map[string]string{}
	for _, im := range p.Images {
		for _, u := range im.Uses {
			keys[u.Key] = im.Ref
		}
	}
	for k, ref := range map[string]string{
		"pod":                               pod,
		"catalog":                           ops.Filtered.Ref,
		"prometheus/bundle":                 operatorstest.Ref("quay.io/example/prometheus-bundle", "0.32.0"),
		"prometheus/prometheus/prometheus":  operatorstest.Ref("quay.io/prometheus/prometheus", "2.0"),
		"etcd/etcd":                         operatorstest.Ref("quay.io/coreos/etcd", "3.5"),
		"hello-microshift-operator/busybox": operatorstest.Ref("quay.io/microshift/busybox", "1.36"),
	} {
		if keys[k] != ref {
			t.Errorf("key %s is %q, want %s", k, keys[k], ref)
		}
	}
	if len(p.Images) != 9 {
		t.Errorf("%d images, want 9 (pod, the filtered catalog, 2 bundle images, 5 related images): %q", len(p.Images), refs)
	}
}

// An operator set selects olm, for --operator; without olm in the
// catalog, or with --without olm, it is refused.
func TestOperatorsSelectOLM(t *testing.T) {
	cat := stepCatalog()
	cat.Components["olm"] = &components.Component{Name: "olm", Description: "olm", Order: 1, Requires: []string{"core"}}
	req := compose.Request{Profile: "minimal", Arch: releases.X86_64, Operators: operatorRequest(t, "etcd")}
	p, err := runStep(t, "select", cat, stepRelease(t, "5.0.0", false), req, &plan.Plan{})
	if err != nil {
		t.Fatal(err)
	}
	c := p.Component("olm")
	if c == nil || len(c.Reasons) != 1 || c.Reasons[0].String() != "--operator" {
		t.Fatalf("olm selected as %+v, want once by --operator", c)
	}
	for _, tc := range []struct {
		cat  *components.Catalog
		req  compose.Request
		want string
	}{
		{stepCatalog(), req, `--operator: operators are installed by component "olm", which the catalog does not have`},
		{cat, compose.Request{Profile: "minimal", Without: []string{"olm"}, Operators: req.Operators}, "--operator: operators are installed by OLM: drop --without olm"},
	} {
		_, err := runStep(t, "request", tc.cat, stepRelease(t, "5.0.0", false), tc.req, &plan.Plan{})
		checkStepErr(t, err, tc.want)
	}
}
