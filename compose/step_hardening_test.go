package compose_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
)

// The hardening step alone: nothing asked, nothing recorded; kernel
// arguments, FIPS and CIS checked against the release and the plan's
// target distro, with the notes they bring.
func TestStepHardening(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	for _, tc := range []struct {
		name      string
		hardening compose.HardeningOptions
		check     func(t *testing.T, p *plan.Plan)
		wantErr   string
	}{
		{name: "none", check: func(t *testing.T, p *plan.Plan) {
			if p.Hardening != nil || len(p.Notes)+len(p.Warnings) != 0 {
				t.Errorf("hardening %+v, notes %q, warnings %q", p.Hardening, p.Notes, p.Warnings)
			}
		}},
		{name: "kernel arguments", hardening: compose.HardeningOptions{KernelArgs: []string{"quiet", "console=ttyS0,115200"}}, check: func(t *testing.T, p *plan.Plan) {
			if want := []string{"quiet", "console=ttyS0,115200"}; p.Hardening == nil || !slices.Equal(p.Hardening.KernelArgs, want) {
				t.Errorf("hardening %+v, want kernel arguments %q", p.Hardening, want)
			}
		}},
		{name: "FIPS", hardening: compose.HardeningOptions{FIPS: true}, check: func(t *testing.T, p *plan.Plan) {
			if !p.Hardening.FIPSOn() || !reflect.DeepEqual(p.Hardening.FIPS.Arches, []string{"x86_64"}) {
				t.Errorf("hardening %+v, want FIPS on x86_64", p.Hardening)
			}
		}},
		{name: "CIS level 1", hardening: compose.HardeningOptions{CIS: compose.CISLevel1}, check: func(t *testing.T, p *plan.Plan) {
			if p.Hardening.CIS == nil || p.Hardening.CIS.Profile != compose.CISProfilePrefix+"cis_server_l1" {
				t.Fatalf("hardening %+v, want CIS Level 1 - Server", p.Hardening)
			}
			if len(p.Notes) == 0 || !strings.HasPrefix(p.Notes[0], "CIS: osbuild remediates the image with "+compose.CISProfilePrefix+"cis_server_l1, tailored to leave out ") {
				t.Errorf("notes %q, want the tailoring first", p.Notes)
			}
		}},
		{name: "a CIS profile the distro lacks", hardening: compose.HardeningOptions{CIS: "cis_workstation_l9"},
			wantErr: `--cis "cis_workstation_l9": rhel-9.8 has no OpenSCAP profile xccdf_org.ssgproject.content_profile_cis_workstation_l9 (osbuild/images allows the CIS profiles cis, cis_server_l1, cis_workstation_l1, cis_workstation_l2 for it); did you mean "cis_workstation_l1"?`},
		{name: "a bad kernel argument", hardening: compose.HardeningOptions{KernelArgs: []string{"a b"}},
			wantErr: `--karg "a b": invalid kernel argument: a space in its key: one argument is a key (letters, digits, _ - .) or key=value, without spaces, quotes, backslashes, $ or control characters, each its own --karg`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := selectedPlan("full", "core")
			p.Target = plan.Target{Distro: "rhel-9.8"}
			got, err := runStep(t, "hardening", nil, rel, compose.Request{Profile: "full", Hardening: tc.hardening}, p)
			if checkStepErr(t, err, tc.wantErr) {
				tc.check(t, got)
			}
		})
	}
}
