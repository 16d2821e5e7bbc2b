package compose

import (
	"fmt"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/kernelargs"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/internal/text"
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
	// CISAuditDone marks a device whose rules were regenerated.
	CISAuditDone = "/var/lib/microshift-compose/cis-audit-rules.done"
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

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
