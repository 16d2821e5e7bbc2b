package lockdiff_test

import (
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/lockdiff"
	"github.com/microshift-compose/microshift-compose/plan"
)

func operatorLock(path, catalog, filtered string, pkgs ...plan.OperatorPackage) *lockdiff.Lock {
	p := &plan.Plan{Schema: plan.Schema, Arch: "x86_64", Release: plan.Release{Version: "5.0.0", Base: "5.0.0"}, Profile: "full"}
	if catalog != "" {
		p.Operators = &plan.Operators{Catalog: plan.OperatorCatalog{Ref: catalog}, Filtered: plan.FilteredCatalog{Ref: filtered}, Packages: pkgs}
	}
	return &lockdiff.Lock{Path: path, Plan: p}
}

// Operator sets compared: a bundle upgraded, a dependency added, a package
// moved to another namespace, one removed, the catalogs changed; and no
// section when neither lock has operators.
func TestCompareOperators(t *testing.T) {
	d := func(n string) string { return "quay.io/example/catalog@sha256:" + strings.Repeat(n, 64) }
	etcd := func(v string) plan.OperatorPackage {
		return plan.OperatorPackage{Name: "etcd", Channel: "stable", Bundle: "etcdoperator.v" + v, Version: v, Namespace: "monitoring", RequiredBy: "prometheus"}
	}
	prom := plan.OperatorPackage{Name: "prometheus", Channel: "beta", Bundle: "prometheusoperator.0.32.0", Version: "0.32.0", Namespace: "monitoring"}
	hello := plan.OperatorPackage{Name: "hello", Channel: "alpha", Bundle: "hello.v0.1.0", Version: "0.1.0", Namespace: "hello"}
	movedHello := hello
	movedHello.Namespace = "edge"
	gone := plan.OperatorPackage{Name: "gone", Channel: "stable", Bundle: "gone.v1", Version: "1.0.0", Namespace: "gone"}
	old := operatorLock("old/compose.lock.json", d("1"), d("2"), etcd("0.9.2"), gone, hello, prom)
	nw := operatorLock("new/compose.lock.json", d("3"), d("4"), etcd("0.9.4"), movedHello, prom)
	diff, err := lockdiff.Compare(old, nw)
	if err != nil {
		t.Fatal(err)
	}
	if diff.Empty() || diff.Operators == nil {
		t.Fatal("no operator change found")
	}
	golden(t, "operators.md", diff.Markdown())
	golden(t, "operators.json", asJSON(t, diff))
	var changes []string
	for _, p := range diff.Operators.Packages {
		changes = append(changes, p.Name+" "+p.Change)
	}
	if got, want := strings.Join(changes, ", "), "etcd changed, gone removed, hello changed"; got != want {
		t.Errorf("changes %q, want %q", got, want)
	}
	// One side without operators: every package added.
	added, err := lockdiff.Compare(operatorLock("a", "", ""), nw)
	if err != nil {
		t.Fatal(err)
	}
	if added.Operators == nil || len(added.Operators.Packages) != 3 || added.Operators.Packages[0].Change != "added" || added.Operators.Catalog.Old != "" {
		t.Errorf("operators added: %+v", added.Operators)
	}
	// The same sets: no section, and no difference.
	same, err := lockdiff.Compare(nw, nw)
	if err != nil {
		t.Fatal(err)
	}
	if same.Operators != nil || !same.Empty() {
		t.Errorf("the same lock compared: %+v", same.Operators)
	}
	none, err := lockdiff.Compare(operatorLock("a", "", ""), operatorLock("b", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if none.Operators != nil || strings.Contains(string(asJSON(t, none)), "operators") {
		t.Error("locks without operators have an operators section")
	}
}
