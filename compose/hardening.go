package compose

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/compose/plan"
	"github.com/microshift-compose/microshift-compose/internal/kernelargs"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// The --cis levels: CIS's server benchmarks, as the SCAP Security Guide of
// RHEL 9 and 10 names them (its "cis" profile is Level 2 - Server).
const (
	CISLevel1 = "level1"
	CISLevel2 = "level2"
)

// CISProfilePrefix starts every SCAP Security Guide profile ID.
const CISProfilePrefix = "xccdf_org.ssgproject.content_profile_"

var cisLevels = map[string]string{CISLevel1: CISProfilePrefix + "cis_server_l1", CISLevel2: CISProfilePrefix + "cis"}

// cisID is a CIS profile's short ID: cis, cis_server_l1, cis_workstation_l2.
var cisID = lazyregexp.New(`^cis(_[a-z0-9]+)*$`)

// CISProfile returns the SCAP Security Guide profile ID --cis names:
// level1, level2, a CIS profile's ID (cis_server_l1) or its full ID
// (xccdf_org.ssgproject.content_profile_cis_server_l1). Whether the distro
// has it is osbuild/images' to say (Resolve checks).
func CISProfile(s string) (string, error) {
	if id, ok := cisLevels[s]; ok {
		return id, nil
	}
	short := strings.TrimPrefix(s, CISProfilePrefix)
	if !cisID.MatchString(short) {
		hint := ""
		if m := suggest.Closest(s, []string{CISLevel1, CISLevel2}); m != "" && m != s {
			hint = fmt.Sprintf("; did you mean %q?", m)
		}
		return "", fmt.Errorf("--cis %s is not a CIS profile: want %s (CIS Level 1 - Server), %s (Level 2 - Server), or a CIS profile of the SCAP Security Guide (cis_server_l1, cis, cis_workstation_l1, cis_workstation_l2, with or without %s)%s",
			text.QuoteExcerpt(s), CISLevel1, CISLevel2, CISProfilePrefix, hint)
	}
	return CISProfilePrefix + short, nil
}

// FIPSConfigSource labels the config --fips sets, in the plan's config
// sources and the drop-in's header.
const FIPSConfigSource = "--fips"

// Device files of --cis: a unit that regenerates, once, the audit rules
// of every setuid and setgid program, as MicroShift's CIS guide does after
// installing MicroShift (CIS rule audit_rules_privileged_commands).
const (
	CISAuditUnit       = "microshift-compose-cis-audit-rules.service"
	CISAuditUnitPath   = "/etc/systemd/system/" + CISAuditUnit
	CISAuditScriptPath = "/etc/microshift-compose/cis-audit-rules.sh"
	// CISAuditRulesPath is the guide's rules file.
	CISAuditRulesPath = "/etc/audit/rules.d/99-privileged-post-install.rules"
	// cisAuditDone marks a device whose rules were regenerated.
	cisAuditDone = "/var/lib/microshift-compose/cis-audit-rules.done"
)

// hardening checks the request's FIPS mode, kernel arguments and CIS
// profile against the release knowledge and the target distro, and
// returns what the plan's writers need; nil for none.
func (r *resolver) hardening(t plan.Target) (*plan.Hardening, error) {
	req := r.req
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
	major, _ := knowledge.DistroMajor(t.Distro)
	if req.FIPS {
		f := r.facts.FIPS
		if f == nil {
			return nil, &CannotHonourError{fmt.Sprintf("--fips: release %s has no FIPS mode microshift-compose knows of: MicroShift is tested in FIPS mode from 4.15 (releases %s)", r.rel, r.know.FIPSReleases())}
		}
		if !slices.Contains(f.Arches, string(req.Arch)) {
			return nil, &CannotHonourError{fmt.Sprintf("--fips: MicroShift %s runs in FIPS mode on %s only, not %s: upstream tests FIPS mode on %s and skips %s",
				r.rel.Stream(), strings.Join(f.Arches, ", "), req.Arch, strings.Join(f.Arches, ", "), req.Arch)}
		}
		fo, ok := r.facts.FIPSOS(major)
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
		have := blueprints.OpenSCAPProfiles(t.Distro)
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
		c := r.facts.CIS(major)
		if c == nil {
			return nil, &CannotHonourError{fmt.Sprintf("--cis: microshift-compose knows no CIS tailoring for MicroShift on distro %s (it knows RHEL %s)", t.Distro, joinInts(r.know.CISMajors()))}
		}
		h.CIS = &plan.CIS{Profile: profile, Unselected: slices.Clone(c.Unselect), AuditRule: c.AuditRule}
		for _, u := range c.Unavoidable {
			h.CIS.Unavoidable = append(h.CIS.Unavoidable, plan.CISRules{Rules: slices.Clone(u.Rules), Why: u.Why})
		}
	}
	return h, nil
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// addHardeningNotes records what the hardening means for the device: the
// release's FIPS caveat as a warning, and for CIS the tailoring and the
// rules a scan of the device fails unavoidably (the report of the lock and
// of resolve).
func (r *resolver) addHardeningNotes(p *plan.Plan) {
	h := p.Hardening
	if h.FIPSOn() {
		if w := r.facts.FIPS.Warning; w != "" {
			p.Warnings = append(p.Warnings, w)
		}
		if why := h.FIPS.ImageModeRefused; why != "" {
			p.Notes = append(p.Notes, "FIPS: the rpm-ostree commit and RPM installs only; no bootc image: "+why)
		}
	}
	if h != nil && h.CIS != nil {
		c := h.CIS
		p.Notes = append(p.Notes, fmt.Sprintf("CIS: osbuild remediates the image with %s, tailored to leave out %s, which MicroShift needs to pass",
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

// addFIPSConfig merges the MicroShift config a FIPS device of the release
// needs, labelled FIPSConfigSource, with a note saying why.
func (r *resolver) addFIPSConfig(p *plan.Plan, m *configMerger) error {
	f := r.facts.FIPS
	if !p.Hardening.FIPSOn() || f == nil || len(f.Config) == 0 {
		return nil
	}
	for _, path := range slices.Sorted(maps.Keys(f.Config)) {
		if err := m.set(path, f.Config[path], FIPSConfigSource); err != nil {
			return err
		}
	}
	p.Notes = append(p.Notes, "FIPS: "+f.ConfigWhy)
	return nil
}

// cisAuditFiles are the unit and script that regenerate the audit rules
// of setuid and setgid programs on the device's first boot.
func cisAuditFiles() []plan.File {
	unit := `[Unit]
Description=Regenerate the audit rules of setuid and setgid programs once (CIS audit_rules_privileged_commands)
Documentation=https://github.com/openshift/microshift/blob/main/docs/user/howto_cis_hardening.md
# Generated by microshift-compose (--cis); do not edit.
After=auditd.service
ConditionPathExists=!` + cisAuditDone + `

[Service]
Type=oneshot
ExecStart=/usr/bin/bash ` + CISAuditScriptPath + `
RemainAfterExit=yes

[Install]
WantedBy=multi-user.target
`
	script := `#!/bin/bash
# Generated by microshift-compose (--cis); do not edit.
# CIS rule audit_rules_privileged_commands wants an audit rule for every
# setuid and setgid program. MicroShift's CIS guide regenerates them after
# MicroShift is installed; this does it on the device's first boot, then
# marks the device done.
set -euo pipefail
rules=` + CISAuditRulesPath + `
{ find / -xdev \( -perm -4000 -o -perm -2000 \) -type f 2>/dev/null || true; } | LC_ALL=C sort |
    awk '{print "-a always,exit -F path=" $1 " -F perm=x -F auid>=1000 -F auid!=unset -k privileged"}' > "${rules}.tmp"
chmod 0600 "${rules}.tmp"
mv "${rules}.tmp" "${rules}"
augenrules --load
mkdir -p ` + dirOf(cisAuditDone) + `
touch ` + cisAuditDone + `
`
	return []plan.File{
		{Path: CISAuditUnitPath, Mode: "0644", Source: "--cis", Data: []byte(unit)},
		{Path: CISAuditScriptPath, Mode: "0755", Source: "--cis", Data: []byte(script)},
	}
}

func dirOf(p string) string { return p[:strings.LastIndex(p, "/")] }
