package compose

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// startPlan checks the request against the catalog and the release (a
// profile, and components, that exist; the release ships the arch) and
// starts the plan with what it asked for and the release it is for.
func startPlan(_ context.Context, in *inputs, p soFar) (soFar, error) {
	if err := checkRequest(in); err != nil {
		return p, err
	}
	rel, req := in.rel, in.req
	p.Schema = plan.Schema
	p.Release = plan.Release{
		Version:    rel.Version.String(),
		Stream:     rel.Stream(),
		Base:       rel.Base(req.Arch),
		Kubernetes: in.facts.Kubernetes,
		Distro:     in.facts.Distro,
		Source:     rel.Source,
		Origin:     rel.Origin,
		RPMs:       releaseRPMs(rel.RPMs),
		Rules:      in.facts.Rules,
	}
	p.Arch = string(req.Arch)
	p.Profile = req.Profile
	p.With = sortedUnique(req.With)
	p.Without = sortedUnique(req.Without)
	if in.facts.Newer {
		p.Warnings = append(p.Warnings, in.facts.NewerWarning())
	}
	return p, nil
}

func checkRequest(in *inputs) error {
	cat, req := in.cat, in.req
	if req.Profile == "" {
		return errors.New("no profile given (have " + strings.Join(cat.ProfileNames(), ", ") + ")")
	}
	if cat.Profiles[req.Profile] == nil {
		names := cat.ProfileNames()
		if m := suggest.Closest(req.Profile, names); m != "" {
			return fmt.Errorf("unknown profile %q; did you mean %q?", req.Profile, m)
		}
		return fmt.Errorf("unknown profile %q (have %s)", req.Profile, strings.Join(names, ", "))
	}
	if in.rel.File("", req.Arch) == nil {
		return fmt.Errorf("release %s has no %s: it does not ship %s", in.rel, releases.FileName("", req.Arch), req.Arch)
	}
	if req.Operators != nil {
		if cat.Components[OLMComponent] == nil {
			return fmt.Errorf("--operator: operators are installed by component %q, which the catalog does not have", OLMComponent)
		}
		if slices.Contains(req.Without, OLMComponent) {
			return fmt.Errorf("--operator: operators are installed by OLM: drop --without %s", OLMComponent)
		}
	}
	seen := map[string]string{}
	for _, flag := range []struct {
		name  string
		names []string
	}{{"--with", req.With}, {"--without", req.Without}} {
		for _, n := range flag.names {
			if cat.Components[n] == nil {
				if cat.Capabilities[n] != nil {
					return fmt.Errorf("%s %s: %q is a capability; name a component that provides it (%s)",
						flag.name, n, n, strings.Join(in.providers(n), ", "))
				}
				if m := suggest.Closest(n, cat.ComponentNames()); m != "" {
					return fmt.Errorf("%s: unknown component %q; did you mean %q?", flag.name, n, m)
				}
				return fmt.Errorf("%s: unknown component %q (see 'microshift-compose components')", flag.name, n)
			}
			if prev, dup := seen[n]; dup && prev != flag.name {
				return fmt.Errorf("component %q is given to both --with and --without", n)
			}
			seen[n] = flag.name
		}
	}
	return nil
}

// releaseRPMs are the release's RPMs as the lock names them: NEVRA and
// checksum, not where they were read from (that differs between machines).
func releaseRPMs(rpms []releases.RPM) []plan.ReleaseRPM {
	var out []plan.ReleaseRPM
	for _, r := range rpms {
		out = append(out, plan.ReleaseRPM{NEVRA: r.NEVRA, SHA256: r.SHA256})
	}
	return out
}
