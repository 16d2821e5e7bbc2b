package lockdiff

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// OperatorChange is an operator package added, removed, or given another
// bundle, channel or namespace.
type OperatorChange struct {
	Name   string `json:"name"`
	Change string `json:"change"` // added, removed, changed
	// Old and New are the package on each side; nil where it is not.
	Old *OperatorSide `json:"old"`
	New *OperatorSide `json:"new"`
}

// OperatorSide is what a lock says of one operator package.
type OperatorSide struct {
	Bundle    string `json:"bundle"`
	Version   string `json:"version"`
	Channel   string `json:"channel"`
	Namespace string `json:"namespace"`
	// RequiredBy is the package that requires it; "" for one asked for.
	RequiredBy string `json:"required_by,omitempty"`
}

// OperatorsChange is what changed of the operator sets: their catalogs
// (the catalog read, and the filtered catalog the devices run) and their
// packages.
type OperatorsChange struct {
	Catalog  Change           `json:"catalog"`
	Filtered Change           `json:"filtered"`
	Packages []OperatorChange `json:"packages"`
}

// Change is a value on both sides ("" where a side has none).
type Change struct {
	Old string `json:"old"`
	New string `json:"new"`
}

func operatorSide(o plan.OperatorPackage) *OperatorSide {
	return &OperatorSide{Bundle: o.Bundle, Version: o.Version, Channel: o.Channel, Namespace: o.Namespace, RequiredBy: o.RequiredBy}
}

// compareOperators compares the operator sets of two plans; nil when
// neither has one, or both the same.
func compareOperators(a, b *plan.Plan) *OperatorsChange {
	if a.Operators == nil && b.Operators == nil {
		return nil
	}
	oc := &OperatorsChange{Packages: []OperatorChange{}}
	pkgs := func(p *plan.Plan) map[string]plan.OperatorPackage {
		out := map[string]plan.OperatorPackage{}
		if p.Operators != nil {
			for _, o := range p.Operators.Packages {
				out[o.Name] = o
			}
		}
		return out
	}
	if a.Operators != nil {
		oc.Catalog.Old, oc.Filtered.Old = a.Operators.Catalog.Ref, a.Operators.Filtered.Ref
	}
	if b.Operators != nil {
		oc.Catalog.New, oc.Filtered.New = b.Operators.Catalog.Ref, b.Operators.Filtered.Ref
	}
	op, np := pkgs(a), pkgs(b)
	names := slices.Collect(maps.Keys(op))
	for n := range np {
		if _, ok := op[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		o, inOld := op[n]
		nw, inNew := np[n]
		switch {
		case !inOld:
			oc.Packages = append(oc.Packages, OperatorChange{Name: n, Change: "added", New: operatorSide(nw)})
		case !inNew:
			oc.Packages = append(oc.Packages, OperatorChange{Name: n, Change: "removed", Old: operatorSide(o)})
		case *operatorSide(o) != *operatorSide(nw):
			oc.Packages = append(oc.Packages, OperatorChange{Name: n, Change: "changed", Old: operatorSide(o), New: operatorSide(nw)})
		}
	}
	if len(oc.Packages) == 0 && oc.Catalog.Old == oc.Catalog.New && oc.Filtered.Old == oc.Filtered.New {
		return nil
	}
	return oc
}

func (s *OperatorSide) describe() string {
	what := fmt.Sprintf("%s %s (%s, namespace %s", text.CodeSpan(s.Bundle), text.MarkdownText(s.Version), text.MarkdownText(s.Channel), text.MarkdownText(s.Namespace))
	if s.RequiredBy != "" {
		what += ", for " + text.MarkdownText(s.RequiredBy)
	}
	return what + ")"
}

func (oc *OperatorsChange) markdown(b *bytes.Buffer) {
	b.WriteString("\n#### Operators\n\n")
	for _, c := range []struct {
		what string
		ch   Change
	}{{"catalog", oc.Catalog}, {"filtered catalog", oc.Filtered}} {
		if c.ch.Old != c.ch.New {
			fmt.Fprintf(b, "- %s %s → %s\n", c.what, refOrNone(c.ch.Old), refOrNone(c.ch.New))
		}
	}
	for _, p := range oc.Packages {
		switch p.Change {
		case "added":
			fmt.Fprintf(b, "- added %s: %s\n", text.CodeSpan(p.Name), p.New.describe())
		case "removed":
			fmt.Fprintf(b, "- removed %s (was %s)\n", text.CodeSpan(p.Name), p.Old.describe())
		default:
			fmt.Fprintf(b, "- %s: %s → %s\n", text.CodeSpan(p.Name), p.Old.describe(), p.New.describe())
		}
	}
}

func refOrNone(ref string) string {
	if ref == "" {
		return "(none)"
	}
	return text.CodeSpan(releases.ShortRef(ref))
}
