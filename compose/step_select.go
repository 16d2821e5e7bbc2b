package compose

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/microshift-compose/microshift-compose/plan"
)

// selectComponents starts from the profile and --with, then adds required
// components and default capability providers until nothing changes: a
// worklist, so each component and requirement is looked at once. The plan
// gets the selection in apply order, each component with its reasons, and
// the provider of each capability.
func selectComponents(_ context.Context, in *inputs, p soFar) (soFar, error) {
	s := newSelector(in)
	if err := s.run(); err != nil {
		return p, err
	}
	p.Notes = append(p.Notes, s.notes...)
	p.Capabilities = map[string]string{}
	// ComponentNames is already in apply order (order, then name).
	for _, n := range in.cat.ComponentNames() {
		reasons, ok := s.reasons[n]
		if !ok {
			continue
		}
		c := in.cat.Components[n]
		p.Components = append(p.Components, plan.Component{
			Name:        n,
			Order:       c.Order,
			Description: c.Description,
			Provides:    nonNil(c.Provides),
			Reasons:     reasons,
		})
		for _, capName := range c.Provides {
			p.Capabilities[capName] = n
		}
	}
	return p, nil
}

// selector is the selection being made: reasons holds each selected
// component's reasons and reasonSet the same for lookups; providers the
// selected providers of each capability; queue the components selected but
// not yet expanded.
type selector struct {
	in        *inputs
	reasons   selected
	reasonSet map[string]map[plan.Reason]bool
	providers map[string][]string
	queue     []string
	without   map[string]bool
	// notes say which profile components the build's own providers
	// replaced.
	notes []string
}

func newSelector(in *inputs) *selector {
	s := &selector{in: in, reasons: selected{}, reasonSet: map[string]map[plan.Reason]bool{}, providers: map[string][]string{}, without: map[string]bool{}}
	for _, n := range in.req.Without {
		s.without[n] = true
	}
	return s
}

// add records why n is in the selection and reports whether n is new
// there; a reason already recorded is not added twice.
func (s *selector) add(n string, why plan.Reason) bool {
	set, had := s.reasonSet[n]
	if !had {
		set = map[plan.Reason]bool{}
		s.reasonSet[n] = set
		s.queue = append(s.queue, n)
		for _, capName := range s.in.cat.Components[n].Provides {
			s.providers[capName] = append(s.providers[capName], n)
		}
	}
	if !set[why] {
		set[why] = true
		s.reasons[n] = append(s.reasons[n], why)
	}
	return !had
}

// capabilityNeed is a selected component requiring a capability.
type capabilityNeed struct{ capability, by string }

func (s *selector) run() error {
	cat, req := s.in.cat, s.in.req
	for _, n := range cat.Profiles[req.Profile].Components {
		if own, capName := s.buildsOwn(n); own != "" {
			s.notes = append(s.notes, fmt.Sprintf("profile %s: %s, the %s provider of %s, in place of %s", req.Profile, own, capName, s.in.facts.Build.Title, n))
			n = own
		}
		if !s.without[n] {
			s.add(n, plan.Reason{Kind: plan.ReasonProfile, Profile: req.Profile})
		}
	}
	for _, n := range req.With {
		s.add(n, plan.Reason{Kind: plan.ReasonWith})
	}
	if req.Operators != nil {
		s.add(OLMComponent, plan.Reason{Kind: plan.ReasonOperators})
	}
	var needs []capabilityNeed
	for {
		for len(s.queue) > 0 {
			n := s.queue[0]
			s.queue = s.queue[1:]
			for _, req := range cat.Components[n].Requires {
				if cat.Components[req] == nil {
					needs = append(needs, capabilityNeed{req, n})
					continue
				}
				if s.without[req] {
					return fmt.Errorf("--without %s: %s requires it (%s: %s)", req, n, n, s.reasons.why(n))
				}
				s.add(req, plan.Reason{Kind: plan.ReasonRequired, By: n})
			}
		}
		// Only once the component closure is stable, so that a provider
		// selected some other way is seen before a default is pulled in.
		// The first unmet need (by requiring component, then declaration)
		// pulls in its default; the closure then runs again.
		sort.SliceStable(needs, func(i, j int) bool { return needs[i].by < needs[j].by })
		unmet := slices.IndexFunc(needs, func(nd capabilityNeed) bool { return len(s.providers[nd.capability]) == 0 })
		if unmet < 0 {
			break
		}
		nd := needs[unmet]
		needs = slices.Delete(needs, 0, unmet+1)
		def := s.in.defaultProvider(nd.capability)
		if cat.Components[def] == nil {
			// Catalog validation allows a capability without a default
			// only when nothing provides it.
			return fmt.Errorf("%s requires a %s provider and no component in the catalog provides %s (%s: %s); add one with --catalog",
				nd.by, nd.capability, nd.capability, nd.by, s.reasons.why(nd.by))
		}
		if s.without[def] {
			others := without(s.in.providers(nd.capability), def)
			hint := ""
			if len(others) > 0 {
				hint = fmt.Sprintf("; select another provider with --with %s", strings.Join(others, " or --with "))
			}
			return fmt.Errorf("--without %s: %s requires a %s provider and %s is its default (%s: %s)%s",
				def, nd.by, nd.capability, def, nd.by, s.reasons.why(nd.by), hint)
		}
		s.add(def, plan.Reason{Kind: plan.ReasonCapability, Capability: nd.capability, By: nd.by})
	}
	for n := range s.reasons {
		sortReasons(s.reasons[n])
	}
	return nil
}

// buildsOwn returns the component that takes profile component n's place on
// the release's build of MicroShift, and the capability: when n is the
// catalog-wide default provider of a capability that the build has a
// default provider of its own for (default_for: kindnet, TopoLVM on
// microshift-io's). A profile that names another provider keeps it.
func (s *selector) buildsOwn(n string) (string, string) {
	cat := s.in.cat
	for _, capName := range cat.Components[n].Provides {
		capa := cat.Capabilities[capName]
		if capa == nil || capa.Default != n {
			continue
		}
		if own := s.in.defaultProvider(capName); own != n && own != "" && len(cat.Components[own].Builds) > 0 {
			return own, capName
		}
	}
	return "", ""
}

// sortReasons puts a component's reasons in one order whatever the order
// they were found in: the profile, --with, --operator, then requirements
// by component.
func sortReasons(rs []plan.Reason) {
	rank := map[string]int{plan.ReasonProfile: 0, plan.ReasonWith: 1, plan.ReasonOperators: 2, plan.ReasonRequired: 3, plan.ReasonCapability: 4}
	sort.SliceStable(rs, func(i, j int) bool {
		if rank[rs[i].Kind] != rank[rs[j].Kind] {
			return rank[rs[i].Kind] < rank[rs[j].Kind]
		}
		if rs[i].By != rs[j].By {
			return rs[i].By < rs[j].By
		}
		return rs[i].Capability < rs[j].Capability
	})
}
