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
		capa := cat.Capabilities[nd.capability]
		if cat.Components[capa.Default] == nil {
			// Catalog validation allows a capability without a default
			// only when nothing provides it.
			return fmt.Errorf("%s requires a %s provider and no component in the catalog provides %s (%s: %s); add one with --catalog",
				nd.by, nd.capability, nd.capability, nd.by, s.reasons.why(nd.by))
		}
		if s.without[capa.Default] {
			others := without(cat.Providers(nd.capability), capa.Default)
			hint := ""
			if len(others) > 0 {
				hint = fmt.Sprintf("; select another provider with --with %s", strings.Join(others, " or --with "))
			}
			return fmt.Errorf("--without %s: %s requires a %s provider and %s is its default (%s: %s)%s",
				capa.Default, nd.by, nd.capability, capa.Default, nd.by, s.reasons.why(nd.by), hint)
		}
		s.add(capa.Default, plan.Reason{Kind: plan.ReasonCapability, Capability: nd.capability, By: nd.by})
	}
	for n := range s.reasons {
		sortReasons(s.reasons[n])
	}
	return nil
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
