package compose_test

import (
	"slices"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

func TestStepRequest(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	for _, tc := range []struct {
		name    string
		req     compose.Request
		wantErr string
	}{
		{name: "profile, --with twice, --without", req: compose.Request{Profile: "full", With: []string{"net-b", "net-b"}, Without: []string{"app"}}},
		{name: "no profile", req: compose.Request{}, wantErr: "no profile given (have full, minimal)"},
		{name: "a typo of a profile", req: compose.Request{Profile: "ful"}, wantErr: `unknown profile "ful"; did you mean "full"?`},
		{name: "an unknown profile", req: compose.Request{Profile: "everything"}, wantErr: `unknown profile "everything" (have full, minimal)`},
		{name: "an arch the release does not ship", req: compose.Request{Profile: "full", Arch: releases.AArch64},
			wantErr: "release 5.0 (steps) has no release-aarch64.json: it does not ship aarch64"},
		{name: "--with a capability", req: compose.Request{Profile: "full", With: []string{"cni"}},
			wantErr: `--with cni: "cni" is a capability; name a component that provides it (net-a, net-b)`},
		{name: "--without a typo", req: compose.Request{Profile: "full", Without: []string{"ap"}},
			wantErr: `--without: unknown component "ap"; did you mean "app"?`},
		{name: "--with an unknown component", req: compose.Request{Profile: "full", With: []string{"storage-lvms"}},
			wantErr: `--with: unknown component "storage-lvms" (see 'microshift-compose components')`},
		{name: "--with and --without", req: compose.Request{Profile: "full", With: []string{"app"}, Without: []string{"app"}},
			wantErr: `component "app" is given to both --with and --without`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := runStep(t, "request", nil, rel, tc.req, &plan.Plan{})
			if !checkStepErr(t, err, tc.wantErr) {
				return
			}
			if p.Schema != plan.Schema || p.Profile != "full" || p.Arch != "x86_64" {
				t.Errorf("plan: schema %d, profile %q, arch %q", p.Schema, p.Profile, p.Arch)
			}
			if !slices.Equal(p.With, []string{"net-b"}) || !slices.Equal(p.Without, []string{"app"}) {
				t.Errorf("plan: --with %q, --without %q, want [net-b] and [app]", p.With, p.Without)
			}
			if r := p.Release; r.Version != "5.0.0" || r.Stream != "5.0" || r.Base != "5.0.0" || r.Source != "steps" || r.Rules != "5.0" {
				t.Errorf("plan.Release = %+v", r)
			}
			if len(p.Components) != 0 || len(p.Warnings) != 0 {
				t.Errorf("the request step selected %v, warned %q", p.Components, p.Warnings)
			}
		})
	}
}
