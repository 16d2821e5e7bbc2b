package compose

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/internal/kernelargs"
	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// resolveHardening checks the request's hardening against the release and
// the plan's target distro, records it in the plan, and says what it
// means for the device.
func resolveHardening(_ context.Context, in *inputs, p soFar) (soFar, error) {
	h, err := hardening(in, p.Target)
	if err != nil {
		return p, err
	}
	p.Hardening = h
	addHardeningNotes(in, p.Plan)
	return p, nil
}

// hardening checks the request's FIPS mode, kernel arguments and CIS
// profile against the release knowledge and the target distro, and
// returns what the plan's writers need; nil for none.
func hardening(in *inputs, t plan.Target) (*plan.Hardening, error) {
	req := in.req.Hardening
	if !req.FIPS && len(req.KernelArgs) == 0 && req.CIS == "" {
		return nil, nil
	}
	h := &plan.Hardening{}
	if len(req.KernelArgs) > 0 {
		args, err := kernelargs.Check(req.KernelArgs)
		if err != nil {
			return nil, err
		}
		for _, a := range args {
			h.KernelArgs = append(h.KernelArgs, a.String())
		}
	}
	major, _ := knowledge.DistroMajor(t.OSBuildDistro())
	if req.FIPS {
		f := in.facts.FIPS
		if f == nil {
			return nil, &CannotHonourError{fmt.Sprintf("--fips: release %s has no FIPS mode microshift-compose knows of: upstream tests MicroShift in FIPS mode from %s", in.rel, in.know.FIPSFrom())}
		}
		if arch := in.req.Arch; !slices.Contains(f.Arches, string(arch)) {
			return nil, &CannotHonourError{fmt.Sprintf("--fips: MicroShift %s runs in FIPS mode on %s only, not %s: upstream tests FIPS mode on %s and skips %s",
				in.rel.Stream(), strings.Join(f.Arches, ", "), arch, strings.Join(f.Arches, ", "), arch)}
		}
		fo, ok := in.facts.FIPSOS(major)
		if !ok {
			return nil, &CannotHonourError{fmt.Sprintf("--fips: microshift-compose knows no FIPS facts for distro %s", t.Distro)}
		}
		h.FIPS = &plan.FIPS{Arches: f.Arches, BootcPackages: fo.BootcPackages, KickstartPost: fo.KickstartPost}
		if !f.ImageMode {
			h.FIPS.ImageModeRefused = f.ImageModeWhy
		}
	}
	if req.CIS != "" {
		profile, err := CISProfile(req.CIS)
		if err != nil {
			return nil, err
		}
		have := distros.OpenSCAPProfiles(t.OSBuildDistro())
		if !slices.Contains(have, profile) {
			var cis []string
			for _, p := range have {
				if short := strings.TrimPrefix(p, CISProfilePrefix); cisID.MatchString(short) {
					cis = append(cis, short)
				}
			}
			hint := ""
			if m := suggest.Closest(strings.TrimPrefix(profile, CISProfilePrefix), cis); m != "" {
				hint = fmt.Sprintf("; did you mean %q?", m)
			}
			return nil, &CannotHonourError{fmt.Sprintf("--cis %s: %s has no OpenSCAP profile %s (osbuild/images allows the CIS profiles %s for it)%s",
				text.QuoteExcerpt(req.CIS), t.Distro, profile, strings.Join(cis, ", "), hint)}
		}
		c := in.facts.CIS(major)
		if c == nil {
			return nil, &CannotHonourError{fmt.Sprintf("--cis: microshift-compose knows no CIS tailoring for MicroShift on distro %s (it knows RHEL %s)", t.Distro, joinInts(in.know.CISMajors()))}
		}
		h.CIS = &plan.CIS{Profile: profile, Unselected: slices.Clone(c.Unselect), AuditRule: c.AuditRule}
		for _, u := range c.Unavoidable {
			h.CIS.Unavoidable = append(h.CIS.Unavoidable, plan.CISRules{Rules: slices.Clone(u.Rules), Why: u.Why})
		}
	}
	return h, nil
}

// addHardeningNotes records what the hardening means for the device: the
// release's FIPS caveat as a warning, and for CIS the tailoring and the
// rules a scan of the device fails unavoidably (the report of the lock and
// of resolve).
func addHardeningNotes(in *inputs, p *plan.Plan) {
	h := p.Hardening
	if h.FIPSOn() {
		if w := in.facts.FIPS.Warning; w != "" {
			p.Warnings = append(p.Warnings, w)
		}
		if why := h.FIPS.ImageModeRefused; why != "" {
			p.Notes = append(p.Notes, "FIPS: the rpm-ostree commit and RPM installs only; no bootc image: "+why)
		}
	}
	if h != nil && h.CIS != nil {
		c := h.CIS
		p.Notes = append(p.Notes, fmt.Sprintf("CIS: osbuild remediates the image with %s, tailored to leave out %s: remediating them would turn off what MicroShift needs",
			c.Profile, strings.Join(c.Unselected, ", ")))
		for _, u := range c.Unavoidable {
			p.Notes = append(p.Notes, fmt.Sprintf("CIS: unavoidable: a scan of the running device fails %s: %s", strings.Join(u.Rules, ", "), u.Why))
		}
		if c.AuditRule != "" {
			p.Notes = append(p.Notes, fmt.Sprintf("CIS: %s is met at first boot by %s, which writes %s for every setuid and setgid program, MicroShift's included",
				c.AuditRule, CISAuditUnit, CISAuditRulesPath))
		}
	}
}
