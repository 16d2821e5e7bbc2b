package knowledge

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
)

// FIPS is what a release does in FIPS mode (build --fips).
type FIPS struct {
	Range
	// Arches are the arches FIPS mode is tested on.
	Arches []string
	// ImageMode: a bootc image of the release can be FIPS; ImageModeWhy
	// says why not when it cannot.
	ImageMode    bool
	ImageModeWhy string
	// Config is the MicroShift config a FIPS device needs (dotted paths),
	// and ConfigWhy why; nil when it needs none.
	Config    map[string]any
	ConfigWhy string
	// Warning is what a FIPS device of the release does that no config
	// changes; "" for nothing.
	Warning string
}

// FIPSOS is what FIPS mode needs of a RHEL major.
type FIPSOS struct {
	RHEL int
	// BootcPackages set the crypto policy in a bootc image
	// (update-crypto-policies).
	BootcPackages []string
	// KickstartPost are the commands an rpm-ostree install runs in %post.
	KickstartPost []string
}

// CIS is the tailoring a CIS profile needs on a RHEL major for MicroShift.
type CIS struct {
	Range
	RHEL int
	// Unselect are the rules remediation must leave out.
	Unselect []string
	// Unavoidable are the rules a scan of a running device fails.
	Unavoidable []CISRules
	// AuditRule is the rule the first-boot audit rule regeneration
	// resolves.
	AuditRule string
}

// CISRules are rules a device fails, and why.
type CISRules struct {
	Rules []string `toml:"rules"`
	Why   string   `toml:"why"`
}

type hardeningTOML struct {
	FIPS []struct {
		Release      string         `toml:"release"`
		Arches       []string       `toml:"arches"`
		ImageMode    bool           `toml:"image_mode"`
		ImageModeWhy string         `toml:"image_mode_why"`
		Config       map[string]any `toml:"config"`
		ConfigWhy    string         `toml:"config_why"`
		Warning      string         `toml:"warning"`
	} `toml:"fips"`
	FIPSOS []struct {
		RHEL          int      `toml:"rhel"`
		BootcPackages []string `toml:"bootc_packages"`
		KickstartPost []string `toml:"kickstart_post"`
	} `toml:"fips_os"`
	CIS []struct {
		Release     string     `toml:"release"`
		RHEL        int        `toml:"rhel"`
		Unselect    []string   `toml:"unselect"`
		Unavoidable []CISRules `toml:"unavoidable"`
		AuditRule   string     `toml:"audit_rule"`
	} `toml:"cis"`
}

// rulePattern is an SCAP Security Guide rule ID as tailoring names it
// (without its xccdf_org.ssgproject.content_rule_ prefix).
var rulePattern = lazyregexp.New(`^[a-z0-9][a-z0-9_]*$`)

// rpmName is a package name dnf installs.
var rpmName = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)

// parseHardening checks and adds [[fips]], [[fips_os]] and [[cis]].
func (k *Knowledge) parseHardening(file string, doc hardeningTOML, rng func(where, s string) (Range, error)) error {
	for i, f := range doc.FIPS {
		where := fmt.Sprintf("fips[%d]", i)
		r, err := rng(where, f.Release)
		if err != nil {
			return err
		}
		if len(f.Arches) == 0 {
			return fmt.Errorf("%s: %s: arches: list at least one", file, where)
		}
		for _, a := range f.Arches {
			if a != "x86_64" && a != "aarch64" {
				return fmt.Errorf("%s: %s: arches: %q is not x86_64 or aarch64", file, where, a)
			}
		}
		if !f.ImageMode && strings.TrimSpace(f.ImageModeWhy) == "" {
			return fmt.Errorf("%s: %s: image_mode_why: required when image_mode is false", file, where)
		}
		if (len(f.Config) == 0) != (strings.TrimSpace(f.ConfigWhy) == "") {
			return fmt.Errorf("%s: %s: config and config_why go together", file, where)
		}
		entry := FIPS{Range: r, Arches: f.Arches, ImageMode: f.ImageMode, ImageModeWhy: oneLine(f.ImageModeWhy), ConfigWhy: oneLine(f.ConfigWhy), Warning: oneLine(f.Warning)}
		if len(f.Config) > 0 {
			entry.Config = map[string]any{}
			flatten("", f.Config, entry.Config)
		}
		k.FIPS = append(k.FIPS, entry)
	}
	for i, o := range doc.FIPSOS {
		where := fmt.Sprintf("fips_os[%d]", i)
		if o.RHEL < 8 {
			return fmt.Errorf("%s: %s: rhel: %d is not a RHEL major", file, where, o.RHEL)
		}
		for _, p := range o.BootcPackages {
			if !rpmName.MatchString(p) {
				return fmt.Errorf("%s: %s: bootc_packages: %q is not a package name", file, where, p)
			}
		}
		for _, c := range o.KickstartPost {
			if strings.TrimSpace(c) == "" || strings.ContainsAny(c, "\n%") {
				return fmt.Errorf("%s: %s: kickstart_post: %q is not one command line", file, where, c)
			}
		}
		if slices.ContainsFunc(k.FIPSOS, func(e FIPSOS) bool { return e.RHEL == o.RHEL }) {
			return fmt.Errorf("%s: %s: rhel %d is listed twice", file, where, o.RHEL)
		}
		k.FIPSOS = append(k.FIPSOS, FIPSOS{RHEL: o.RHEL, BootcPackages: o.BootcPackages, KickstartPost: o.KickstartPost})
	}
	for i, c := range doc.CIS {
		where := fmt.Sprintf("cis[%d]", i)
		r, err := rng(where, c.Release)
		if err != nil {
			return err
		}
		if c.RHEL < 8 {
			return fmt.Errorf("%s: %s: rhel: %d is not a RHEL major", file, where, c.RHEL)
		}
		rules := slices.Clone(c.Unselect)
		for j, u := range c.Unavoidable {
			if len(u.Rules) == 0 || strings.TrimSpace(u.Why) == "" {
				return fmt.Errorf("%s: %s: unavoidable[%d]: rules and why are required", file, where, j)
			}
			rules = append(rules, u.Rules...)
			c.Unavoidable[j].Why = oneLine(u.Why)
		}
		if c.AuditRule != "" {
			rules = append(rules, c.AuditRule)
		}
		for _, rule := range rules {
			if !rulePattern.MatchString(rule) {
				return fmt.Errorf("%s: %s: %q is not an SCAP Security Guide rule ID (lowercase letters, digits and _)", file, where, rule)
			}
		}
		k.CIS = append(k.CIS, CIS{Range: r, RHEL: c.RHEL, Unselect: c.Unselect, Unavoidable: c.Unavoidable, AuditRule: c.AuditRule})
	}
	return nil
}

// fipsFor picks the first [[fips]] entry that matches v.
func (k *Knowledge) fipsFor(v *semver.Version) *FIPS {
	for i := range k.FIPS {
		if k.FIPS[i].Matches(v) {
			return &k.FIPS[i]
		}
	}
	return nil
}

// FIPSFrom is the first release FIPS mode is known for ("4.15"): the
// lowest ">=" bound of the [[fips]] entries; "" for none.
func (k *Knowledge) FIPSFrom() string {
	var low *semver.Version
	for _, f := range k.FIPS {
		for _, part := range strings.Split(f.Release, ",") {
			v, err := semver.NewVersion(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(part), ">=")))
			if strings.HasPrefix(strings.TrimSpace(part), ">=") && err == nil && (low == nil || v.LessThan(low)) {
				low = v
			}
		}
	}
	if low == nil {
		return ""
	}
	return fmt.Sprintf("%d.%d", low.Major(), low.Minor())
}

// FIPSOS returns what FIPS mode needs of RHEL major, false when the
// knowledge has nothing for it.
func (r *Release) FIPSOS(major int) (FIPSOS, bool) {
	for _, o := range r.k.FIPSOS {
		if o.RHEL == major {
			return o, true
		}
	}
	return FIPSOS{}, false
}

// CIS returns the CIS tailoring of the release on RHEL major, nil when
// the knowledge has none.
func (r *Release) CIS(major int) *CIS {
	for i := range r.k.CIS {
		if c := &r.k.CIS[i]; c.RHEL == major && c.Matches(r.Version) {
			return c
		}
	}
	return nil
}

// CISMajors lists the RHEL majors the knowledge has CIS tailoring for.
func (k *Knowledge) CISMajors() []int {
	seen := map[int]bool{}
	for _, c := range k.CIS {
		seen[c.RHEL] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// DistroMajor is the RHEL major of an osbuild distro name: 9 for
// "rhel-9.6", 10 for "rhel-10.2" or "centos-10"; false for another name.
func DistroMajor(name string) (int, bool) {
	id, version, ok := strings.Cut(name, "-")
	if !ok || (id != "rhel" && id != "centos") {
		return 0, false
	}
	major, _, _ := strings.Cut(version, ".")
	n, err := strconv.Atoi(major)
	if err != nil || n <= 0 || strconv.Itoa(n) != major {
		return 0, false
	}
	return n, true
}
