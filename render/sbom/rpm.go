package sbom

import (
	"strings"

	"github.com/package-url/packageurl-go"

	"github.com/microshift-compose/microshift-compose/plan"
)

// nevra is an RPM's name-[epoch:]version-release.arch, split.
type nevra struct {
	name, epoch, version, release, arch string
}

// parseNEVRA splits name-[epoch:]version-release.arch (the form the lock
// records release-info RPMs in): the arch after the last '.', the release
// and version before the last two '-' (neither holds one; a name may).
func parseNEVRA(s string) (nevra, bool) {
	rest, arch, ok := cutLast(s, ".")
	if !ok || arch == "" {
		return nevra{}, false
	}
	rest, release, ok := cutLast(rest, "-")
	if !ok || release == "" {
		return nevra{}, false
	}
	name, ev, ok := cutLast(rest, "-")
	if !ok || name == "" || ev == "" {
		return nevra{}, false
	}
	n := nevra{name: name, version: ev, release: release, arch: arch}
	if e, v, ok := strings.Cut(ev, ":"); ok {
		n.epoch, n.version = e, v
	}
	if n.version == "" {
		return nevra{}, false
	}
	return n, true
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// evr is [epoch:]version-release, as SPDX's versionInfo and dnf spell it.
func (n nevra) evr() string {
	v := n.version + "-" + n.release
	if n.epoch != "" {
		v = n.epoch + ":" + v
	}
	return v
}

func (n nevra) String() string { return n.name + "-" + n.evr() + "." + n.arch }

// rpmInfo is what both SBOM formats say of one RPM.
type rpmInfo struct {
	// version is the build's [epoch:]version-release when the plan pins
	// the RPM to a build it records, else the version constraint the
	// blueprint requests.
	version string
	purl    string
	// nevra is the exact NEVRA, "" unless the plan records the RPM itself
	// (a release-info RPM release fetch or import read).
	nevra string
	// sha256 is the .rpm's, when recorded.
	sha256  string
	comment string
}

// describeRPM describes one of the plan's RPMs. An RPM pinned to the
// release's version (Pin exact) whose build the plan records (the
// release-info RPMs of release fetch or release import, core first) has
// that build's epoch, version and release: MicroShift's spec builds all
// its RPMs at once, and the blueprint's version pin admits only that
// version. Its arch is known exactly only for the recorded RPMs; for the
// others it is the device's or noarch, as the spec builds them, and dnf
// picks it.
func describeRPM(pkg plan.Package, p *plan.Plan) rpmInfo {
	info := rpmInfo{version: pkg.Version, comment: rpmComment(pkg.Version)}
	q := map[string]string{}
	if d := targetDistro(p); d != "" {
		q["distro"] = d
	}
	purlVersion := ""
	if exactVersion(pkg.Version) {
		purlVersion = pkg.Version
	}
	if build, ok := recordedBuild(pkg, p); ok {
		info.version = build.evr()
		purlVersion = build.version + "-" + build.release
		if build.epoch != "" {
			q["epoch"] = build.epoch
		}
		if r, ok := recordedRPM(pkg.Name, p); ok {
			n, _ := parseNEVRA(r.NEVRA)
			info.nevra, info.sha256 = n.String(), r.SHA256
			q["arch"] = n.arch
			info.comment = "pinned to version " + pkg.Version + ": the build " + info.nevra + " the release files were read from"
		} else {
			info.comment = "pinned to version " + pkg.Version + ", built with " + p.Release.RPMs[0].NEVRA + " (one build of MicroShift's spec): " +
				pkg.Name + "-" + info.version + ", for the device's arch or noarch as the spec builds it"
		}
	}
	var quals packageurl.Qualifiers
	if len(q) > 0 {
		quals = packageurl.QualifiersFromMap(q)
	}
	info.purl = packageurl.NewPackageURL(packageurl.TypeRPM, namespaceOf(p), pkg.Name, purlVersion, quals, "").ToString()
	return info
}

// recordedBuild is the build of MicroShift's spec pkg is pinned to: the
// plan pins exactly to its release's version (or, for a build of MicroShift
// that versions its RPMs otherwise, to the recorded build's
// version-release), pkg has that version (only the spec's RPMs do), and the
// plan records the core release-info RPM of that version.
func recordedBuild(pkg plan.Package, p *plan.Plan) (nevra, bool) {
	want := p.Release.Base
	if b := p.Release.Build; b != nil && b.Version != "" {
		want = b.Version
	}
	if p.Release.Pin != plan.PinExact || pkg.Version == "" || pkg.Version != want || len(p.Release.RPMs) == 0 {
		return nevra{}, false
	}
	core, ok := parseNEVRA(p.Release.RPMs[0].NEVRA)
	if !ok || core.version != pkg.Version && core.version+"-"+core.release != pkg.Version {
		return nevra{}, false
	}
	return core, true
}

// recordedRPM is the release-info RPM of that name the plan records.
func recordedRPM(name string, p *plan.Plan) (plan.ReleaseRPM, bool) {
	for _, r := range p.Release.RPMs {
		if n, ok := parseNEVRA(r.NEVRA); ok && n.name == name {
			return r, true
		}
	}
	return plan.ReleaseRPM{}, false
}
