package trust_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/render/trust"
)

// A plan's filtered operator catalog is built by build and signed by no
// one: a policy that checks signatures says so, with what to do.
func TestDeviceTrustOperatorCatalog(t *testing.T) {
	filtered := "quay.io/example/catalog@sha256:" + strings.Repeat("1", 64)
	for _, ops := range []*plan.Operators{nil, {Filtered: plan.FilteredCatalog{Ref: filtered}}} {
		p := &plan.Plan{Images: []plan.Image{{Ref: filtered, Pinned: true}}, Operators: ops}
		if err := trust.Add(p, trust.Options{Keys: []string{publicKey(t)}}); err != nil {
			t.Fatal(err)
		}
		warned := slices.ContainsFunc(p.Warnings, func(w string) bool {
			return strings.Contains(w, "the filtered operator catalog "+filtered+" is built here, so no one has signed it") && strings.Contains(w, "cosign sign --key KEY")
		})
		if warned != (ops != nil) {
			t.Errorf("operators %v: warnings %q", ops != nil, p.Warnings)
		}
	}
}
