package releases

import (
	"strings"

	"github.com/Masterminds/semver/v3"
)

// What a release.base names.
const (
	// Shipped is a published version, X.Y.Z: MicroShift's RPMs of exactly
	// that version carry exactly these images.
	Shipped = "shipped"
	// Nightly is a development build ("4.18.0-0.nightly-2025-...").
	Nightly = "nightly"
	// Candidate is an engineering or release candidate ("5.0.0-ec.2",
	// "4.19.0-rc.3").
	Candidate = "candidate"
	// Prerelease is any other pre-release version.
	Prerelease = "pre-release"
	// Unknown is a base that is not a semantic version.
	Unknown = "unknown"
)

// BaseKind says what a release.base names: Shipped for a plain X.Y.Z,
// otherwise the kind of development build.
func BaseKind(base string) string {
	// Only a strict X.Y.Z is a published RPM version: "4.18" or "v4.18.7"
	// are not.
	v, err := semver.StrictNewVersion(base)
	strict := err == nil
	if !strict {
		if v, err = semver.NewVersion(base); err != nil {
			return Unknown
		}
	}
	pre := v.Prerelease()
	switch {
	case strict && pre == "" && v.Metadata() == "":
		return Shipped
	case strings.Contains(pre, "nightly"):
		return Nightly
	case strings.HasPrefix(pre, "rc.") || strings.HasPrefix(pre, "ec.") || strings.Contains(pre, ".rc.") || strings.Contains(pre, ".ec."):
		return Candidate
	}
	return Prerelease
}

// DescribeKind names a kind for messages: "a nightly build".
func DescribeKind(kind string) string {
	switch kind {
	case Shipped:
		return "a shipped version"
	case Nightly:
		return "a nightly build"
	case Candidate:
		return "a release candidate"
	case Prerelease:
		return "a pre-release"
	}
	return "not a semantic version"
}
