package compose

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/osbuild/blueprint/pkg/blueprint"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/internal/kernelargs"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
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

// HardeningOptions are what a request asks of the device's OS beyond its
// files: the flags --fips, --karg and --cis, and a composition file's
// fips, kernel_args and cis keys.
type HardeningOptions struct {
	// FIPS turns on FIPS mode: fips=1 on the kernel command line, the
	// FIPS crypto policy, and the MicroShift config the release needs.
	FIPS bool
	// KernelArgs are the kernel arguments the device boots with, in
	// order: each a key or key=value (internal/kernelargs).
	KernelArgs []string
	// CIS is the CIS profile the device is hardened with: CISLevel1,
	// CISLevel2, or a CIS profile ID of the SCAP Security Guide, with or
	// without CISProfilePrefix; "" for none.
	CIS string
}

// Validate checks what can be checked without a release or a distro: the
// kernel arguments, and that CIS names a CIS profile.
func (o HardeningOptions) Validate() error {
	if _, err := kernelargs.Check(o.KernelArgs); err != nil {
		return err
	}
	if o.CIS != "" {
		if _, err := CISProfile(o.CIS); err != nil {
			return err
		}
	}
	return nil
}

// hardening checks the request's FIPS mode, kernel arguments and CIS
// profile against the release knowledge and the target distro, and
// returns what the plan's writers need; nil for none.
func (r *resolver) hardening(t plan.Target) (*plan.Hardening, error) {
	req := r.req.Hardening
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
			return nil, &CannotHonourError{fmt.Sprintf("--fips: release %s has no FIPS mode microshift-compose knows of: upstream tests MicroShift in FIPS mode from %s", r.rel, r.know.FIPSFrom())}
		}
		if arch := r.req.Arch; !slices.Contains(f.Arches, string(arch)) {
			return nil, &CannotHonourError{fmt.Sprintf("--fips: MicroShift %s runs in FIPS mode on %s only, not %s: upstream tests FIPS mode on %s and skips %s",
				r.rel.Stream(), strings.Join(f.Arches, ", "), arch, strings.Join(f.Arches, ", "), arch)}
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

// checkHardeningOutputs refuses hardening that the outputs a build writes
// cannot carry, naming why, and returns notes saying which outputs carry
// what where one does not:
//   - FIPS in the Containerfile of a release whose bootc images cannot be
//     FIPS (the release knowledge says why);
//   - CIS in the Containerfile: osbuild/images runs OpenSCAP remediation
//     while it builds a package-based image, and bootc-image-builder's
//     image types take no customizations.openscap, so nothing would
//     remediate the bootc image;
//   - kernel arguments no output takes: osbuild's edge-commit (RHEL 9's
//     default) has no customizations.kernel.append, as an ostree commit's
//     kernel command line is its deployment's.
//
// hasBlueprint: a blueprint.toml is written; kargsIn are the blueprints that
// took the kernel arguments.
func checkHardeningOutputs(p *plan.Plan, opts BuildOptions, imageType string, hasBlueprint bool, kargsIn []string) ([]string, error) {
	h := p.Hardening
	if h == nil {
		return nil, nil
	}
	distro, arch := p.Target.Distro, releases.Arch(p.Arch)
	if opts.Bootc && h.FIPSOn() && h.FIPS.ImageModeRefused != "" {
		return nil, fmt.Errorf("--fips with --bootc: MicroShift %s cannot run in FIPS mode from a bootc image: %s", p.Release.Stream, h.FIPS.ImageModeRefused)
	}
	if opts.Bootc && h.CIS != nil {
		why := "bootc-image-builder takes no customizations.openscap"
		if err := blueprints.BootcUnsupported(distro, arch, "qcow2", &blueprint.Customizations{OpenSCAP: &blueprint.OpenSCAPCustomization{ProfileID: h.CIS.Profile}}); err != nil {
			why += " (osbuild/images: " + text.OneLine(err.Error()) + ")"
		}
		return nil, fmt.Errorf("--cis with --bootc: the Containerfile's bootc image cannot be remediated with OpenSCAP: osbuild/images remediates while it builds a package-based image, and %s; build without --bootc, with an --image-type that takes customizations.openscap (%s)",
			why, strings.Join(blueprints.ImageTypesTaking(distro, arch, &blueprint.Customizations{OpenSCAP: &blueprint.OpenSCAPCustomization{ProfileID: h.CIS.Profile}}), ", "))
	}
	// blueprint.toml is the commit an installer image type installs.
	bpType := imageType
	if it, err := blueprints.ImageType(distro, imageType, arch); err == nil && blueprints.InstallsCommit(it) {
		bpType = blueprints.DefaultImageType
	}
	var notes []string
	if len(h.KernelArgs) > 0 {
		carriers := slices.Clone(kargsIn)
		if opts.Installer.Kickstart {
			carriers = append(carriers, KickstartFile)
		}
		if opts.Installer.BIB && opts.Installer.Kickstart {
			carriers = append(carriers, BIBConfigFile)
		}
		if opts.Bootc {
			carriers = append(carriers, Containerfile)
		}
		if len(carriers) == 0 {
			return nil, fmt.Errorf("%s: no output takes kernel arguments: osbuild's %s has no customizations.kernel.append (an ostree commit's kernel command line is set where it is deployed); add --kickstart, --bootc, or an --image-type that takes them (%s)",
				kernelargs.Flag, imageType, strings.Join(blueprints.ImageTypesTaking(distro, arch, &blueprint.Customizations{Kernel: &blueprint.KernelCustomization{Append: "quiet"}}), ", "))
		}
		if hasBlueprint && !slices.Contains(kargsIn, BlueprintFile) {
			notes = append(notes, fmt.Sprintf("kernel arguments (%s): in %s; not in %s, as osbuild's %s takes no customizations.kernel.append (an ostree commit's kernel command line is set where it is deployed)",
				kernelargs.Flag, strings.Join(carriers, ", "), BlueprintFile, bpType))
		}
	}
	if h.FIPSOn() && hasBlueprint && !opts.Installer.Kickstart && opts.Installer.OSTree == nil {
		if it, err := blueprints.ImageType(distro, bpType, arch); err == nil && it.OSTreeRef() != "" && !blueprints.InstallsCommit(it) {
			notes = append(notes, fmt.Sprintf("FIPS: %s's ostree commit (%s) has the FIPS crypto policy; fips=1 on the kernel command line is set by what deploys it (--kickstart writes it into microshift.ks, an installer --image-type into installer.toml), not by the commit", BlueprintFile, bpType))
		}
	}
	return notes, nil
}
