package operators

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/k8sname"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// GlobalNamespace is the namespace MicroShift's OLM ships with an
// OperatorGroup of its own (global-operators, all namespaces): an
// operator installed there gets no OperatorGroup of ours, as a namespace
// of two OperatorGroups installs nothing.
const GlobalNamespace = "openshift-operators"

// Install is how the device gets one selected package.
type Install struct {
	*Selected
	// Namespace is where OLM installs it.
	Namespace string
	// Subscribed: the package was asked for and gets a Subscription;
	// otherwise OLM installs it, a dependency, in its dependent's
	// namespace.
	Subscribed bool
	// Approval is the Subscription's installPlanApproval.
	Approval string
	// InstallMode is the namespace's OperatorGroup's mode.
	InstallMode string
	// CSV is what the catalog says of the bundle's CSV.
	CSV *CSVFacts
	// Waited: the greenboot check waits for its deployments (automatic
	// approval, deployments known).
	Waited bool
}

// Installs decides where each selected package goes: a package asked for
// in the namespace asked for, else the one its CSV suggests, else one named
// after it; a dependency in its dependent's namespace (OLM installs it
// there), and so a package asked for that another requires. Each namespace
// gets the install mode every CSV in it supports (AllNamespaces first).
// Notes say what the device does not wait for.
func Installs(res *Result) ([]Install, []string, error) {
	set, facts := res.Set, res.Configs.Bundles
	ns := map[string]string{}
	why := map[string]string{} // package -> how its namespace was decided
	requiredBy := map[string][]Edge{}
	for _, e := range set.Edges {
		requiredBy[e.To] = append(requiredBy[e.To], e)
	}
	assignRoot := func(sel *Selected) error {
		n, how := sel.Package, "named after the package"
		if f := facts[sel.Package]; f != nil && f.SuggestedNamespace != "" {
			n, how = f.SuggestedNamespace, "its CSV's "+SuggestedNamespaceAnnotation
		}
		if sel.Choice.Namespace != "" {
			n, how = sel.Choice.Namespace, "asked for"
		}
		if err := k8sname.Namespace(n); err != nil {
			return fmt.Errorf("--operator %s: %s is no namespace name (%v): name one with %s,namespace=NS", sel.Choice, text.QuoteExcerpt(n), err, sel.Choice)
		}
		ns[sel.Package], why[sel.Package] = n, how
		return nil
	}
	// Propagate along the requirements: a dependency goes where its
	// dependent is.
	var propagate func(from string) error
	propagate = func(from string) error {
		for _, e := range set.Edges {
			if e.From != from {
				continue
			}
			to := set.Get(e.To)
			want := ns[from]
			have, ok := ns[e.To]
			switch {
			case !ok && to.Choice != nil && to.Choice.Namespace != "" && to.Choice.Namespace != want:
				return fmt.Errorf("--operator %s: %s is required by %s, which is installed in namespace %s, and OLM installs a dependency in its dependent's namespace: drop namespace=%s, or install both in one", to.Choice, e.To, from, want, to.Choice.Namespace)
			case !ok:
				ns[e.To], why[e.To] = want, "the namespace of "+from+", which requires it"
				if err := propagate(e.To); err != nil {
					return err
				}
			case have != want:
				return fmt.Errorf("operators: %s is required by %s (namespace %s) and is installed in namespace %s (%s): OLM installs a dependency in its dependent's namespace, so it would run twice; install them in one namespace (namespace=NS)", e.To, from, want, have, why[e.To])
			}
		}
		return nil
	}
	// Packages asked for that nothing requires first, by name; then any
	// left (a cycle of requirements).
	for pass := 0; pass < 2; pass++ {
		for _, sel := range set.Selected {
			if sel.Choice == nil || ns[sel.Package] != "" || (pass == 0 && len(requiredBy[sel.Package]) > 0) {
				continue
			}
			if err := assignRoot(sel); err != nil {
				return nil, nil, err
			}
			if err := propagate(sel.Package); err != nil {
				return nil, nil, err
			}
		}
	}
	byNS := map[string][]*Selected{}
	for _, sel := range set.Selected {
		byNS[ns[sel.Package]] = append(byNS[ns[sel.Package]], sel)
	}
	modes := map[string]string{}
	var notes []string
	for _, n := range slices.Sorted(maps.Keys(byNS)) {
		mode, err := namespaceMode(n, byNS[n], facts)
		if err != nil {
			return nil, nil, err
		}
		modes[n] = mode
	}
	manual := map[string]bool{}
	for _, sel := range set.Selected {
		if sel.Choice != nil && sel.Choice.Approval == ApprovalManual {
			manual[ns[sel.Package]] = true
		}
	}
	var out []Install
	for _, sel := range set.Selected {
		in := Install{Selected: sel, Namespace: ns[sel.Package], Subscribed: sel.Choice != nil, InstallMode: modes[ns[sel.Package]], CSV: facts[sel.Package]}
		if in.Subscribed {
			in.Approval = cmpOr(sel.Choice.Approval, ApprovalAutomatic)
		}
		switch {
		case manual[in.Namespace]:
			notes = append(notes, fmt.Sprintf("operators: %s: namespace %s has a Subscription with installPlanApproval Manual: OLM installs nothing there until someone approves its InstallPlan (oc patch installplan ... --type merge -p '{\"spec\":{\"approved\":true}}'), so the greenboot check does not wait for it", sel.Package, in.Namespace))
		case in.CSV == nil || in.CSV.Deployments == nil:
			notes = append(notes, fmt.Sprintf("operators: %s: the catalog carries no install strategy of bundle %s (olm.csv.metadata without olm.bundle.object), so the greenboot check cannot name its deployments and does not wait for it; oc get csv -n %s shows it", sel.Package, sel.Bundle.Name, in.Namespace))
		default:
			in.Waited = len(in.CSV.Deployments) > 0
		}
		out = append(out, in)
	}
	return out, notes, nil
}

// namespaceMode is the install mode of a namespace's OperatorGroup: one
// every CSV in it supports, AllNamespaces first (what OLM's own default
// OperatorGroup has), then OwnNamespace. A CSV whose install modes the
// catalog does not carry is taken to support AllNamespaces.
func namespaceMode(n string, sels []*Selected, facts map[string]*CSVFacts) (string, error) {
	supports := func(sel *Selected, mode string) bool {
		f := facts[sel.Package]
		if f == nil || f.InstallModes == nil {
			return mode == InstallAllNamespaces
		}
		return f.InstallModes[mode]
	}
	candidates := []string{InstallAllNamespaces, InstallOwnNamespace}
	if n == GlobalNamespace {
		candidates = candidates[:1] // MicroShift's own OperatorGroup there
	}
	for _, mode := range candidates {
		all := true
		for _, sel := range sels {
			all = all && supports(sel, mode)
		}
		if all {
			return mode, nil
		}
	}
	var what []string
	for _, sel := range sels {
		var ms []string
		if f := facts[sel.Package]; f != nil {
			for _, m := range slices.Sorted(maps.Keys(f.InstallModes)) {
				if f.InstallModes[m] {
					ms = append(ms, m)
				}
			}
		}
		what = append(what, fmt.Sprintf("%s supports %s", sel.Package, cmpOr(strings.Join(ms, ", "), "no install mode")))
	}
	return "", fmt.Errorf("operators: namespace %s needs one OperatorGroup whose install mode every operator in it supports (%s), and none of %s is: install them in namespaces of their own (namespace=NS)", n, strings.Join(what, "; "), strings.Join(candidates, " or "))
}
