package blueprints

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/safetext"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
)

// What the values of a plan that reach generated text may look like. The
// catalog, the release files and --config are checked when they are read;
// CheckPlan checks the plan again, as a whole, right before anything is
// generated from it, so that a value from any source (a lock, a plugin's
// rendering, a future input) meets the same rule.
var (
	labelPattern   = lazyregexp.New(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	streamPattern  = lazyregexp.New(`^[0-9]+\.[0-9]+$`)
	packagePattern = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)
	// versionPattern is X.Y.Z or X.Y.* (Red Hat's), or an RPM
	// version-release (microshift-io's 4.21.0_..._okd_scos.6-1.el9).
	versionPattern = lazyregexp.New(`^[0-9][0-9.]*(\.\*)?$|^[0-9][0-9A-Za-z._+~^]*-[0-9A-Za-z._+~^]+$`)
	repoIDPattern  = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)
	unitPattern    = lazyregexp.New(`^[A-Za-z0-9:_.@-]+$`)
	portPattern    = lazyregexp.New(`^[0-9]{1,5}(-[0-9]{1,5})?:(tcp|udp)$`)
	modePattern    = lazyregexp.New(`^0?[0-7]{3}$`)
)

// CheckPlan checks every value of p that blueprint.toml or the
// Containerfile carries: names, packages, services, firewall entries,
// image references, and device file paths (safetext.DevicePath) and modes.
// The generators quote what they write as well; this refuses what no
// quoting makes right (a newline in a path, a package that is not one).
func CheckPlan(p *plan.Plan) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("refusing to generate outputs from the plan: "+format, args...)
	}
	if !labelPattern.MatchString(p.Profile) {
		return fail("profile %q is not a name (lowercase letters, digits and dashes)", p.Profile)
	}
	if p.Arch != "x86_64" && p.Arch != "aarch64" {
		return fail("arch %q is not x86_64 or aarch64", p.Arch)
	}
	if !streamPattern.MatchString(p.Release.Stream) {
		return fail("release stream %q is not major.minor", p.Release.Stream)
	}
	if text.HasUnsafe(p.Release.Version) || strings.ContainsAny(p.Release.Version, " \"'") {
		return fail("release version %q is not a version", p.Release.Version)
	}
	for _, c := range p.Components {
		if !labelPattern.MatchString(c.Name) {
			return fail("component %q is not a name (lowercase letters, digits and dashes)", c.Name)
		}
	}
	for _, pkg := range p.Packages {
		if !packagePattern.MatchString(pkg.Name) {
			return fail("package %q is not a package name", pkg.Name)
		}
		if pkg.Version != "" && !versionPattern.MatchString(pkg.Version) {
			return fail("package %s: version %q is not a version", pkg.Name, pkg.Version)
		}
	}
	for _, r := range p.Repositories {
		if !repoIDPattern.MatchString(r.ID) {
			return fail("repository ID %q is not one dnf takes", r.ID)
		}
		for _, u := range append(strings.Fields(r.BaseURL), r.GPGKey...) {
			if text.HasUnsafe(u) || strings.ContainsAny(u, "\"'\\`") || !strings.Contains(u, "://") {
				return fail("repository %s: %q is not a URL", r.ID, u)
			}
		}
		if text.HasUnsafe(r.Name) {
			return fail("repository %s: name %q contains a control character", r.ID, r.Name)
		}
	}
	for _, im := range p.Images {
		if text.HasUnsafe(im.Ref) {
			return fail("image %q contains a control character", im.Ref)
		}
		if _, err := imageref.ParseReference(im.Ref, name.StrictValidation); err != nil {
			return fail("image %q is not an image reference: %v", im.Ref, err)
		}
		if _, err := imageref.NewTag(im.Tag, name.StrictValidation); im.Tag != "" && (err != nil || text.HasUnsafe(im.Tag)) {
			return fail("image %s: tag %q is not a tag reference", im.Ref, im.Tag)
		}
	}
	for _, u := range append(append([]string{}, p.Services.Enabled...), p.Services.Disabled...) {
		if !unitPattern.MatchString(u) {
			return fail("service %q is not a systemd unit name", u)
		}
	}
	for _, port := range p.Firewall.Ports {
		if !portPattern.MatchString(port) {
			return fail("firewall port %q is not port:proto or from-to:proto", port)
		}
	}
	for _, s := range p.Firewall.Services {
		if !labelPattern.MatchString(s) {
			return fail("firewall service %q is not a firewalld service name", s)
		}
	}
	for _, s := range p.Firewall.TrustedSources {
		if _, err := netip.ParseAddr(s); err == nil {
			continue
		}
		if _, err := netip.ParsePrefix(s); err != nil {
			return fail("firewall trusted source %q is not an IP address or CIDR", s)
		}
	}
	for _, f := range p.Files {
		if err := safetext.DevicePath(f.Path); err != nil {
			return fail("device file path %q %v", f.Path, err)
		}
		if !modePattern.MatchString(f.Mode) {
			return fail("device file %s: mode %q is not octal such as 0644", f.Path, f.Mode)
		}
		if !utf8.Valid(f.Data) {
			return fail("device file %s is not UTF-8 text (blueprint.toml carries file contents as TOML strings)", f.Path)
		}
	}
	return nil
}

// copyInstruction writes one COPY: the mode flag, then the source and
// destination quoted by safetext.ContainerfileArgs (the JSON form when a
// path holds a space, a quote or a $), so that no path can add an
// instruction or a line.
func copyInstruction(mode, src, dst string) string {
	if !modePattern.MatchString(mode) {
		mode = "0644" // CheckPlan refuses it first; never write a bad flag
	}
	return "COPY --chmod=" + mode + " " + safetext.ContainerfileArgs(src, dst)
}
