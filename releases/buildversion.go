package releases

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// MicroShiftIOVersion is the version of microshift-io's RPMs: the
// MicroShift version it was built from, when, from which openshift/microshift
// commit, and the OKD release its images come from. microshift-io writes
// MICROSHIFT-VERSION-gCOMMIT-OKD-TAG and turns every dash into an
// underscore, as an RPM version must (its src/image/build-rpms.sh,
// docs/versioning.md):
//
//	4.21.0_202511271015_ga9cd00b34_4.21.0_okd_scos.ec.5  a branch build (X.Y.Z, build time)
//	4.20.0_202510201126.p0_g1c4675ace_4.20.0_okd_scos.6  a build of a tag (X.Y.Z-TIMESTAMP.pN)
//	4.21.0_rc.1_202511201126.p0_gabcdef0_4.21.0_okd_scos.6  a candidate's tag
//	4.21.0_ga9cd00b34_4.21.0_okd_scos.ec.5  an early build, without a time
type MicroShiftIOVersion struct {
	// Version is X.Y.Z of MicroShift.
	Version *semver.Version
	// Prerelease is "ec.N" or "rc.N" for a build of a candidate's tag.
	Prerelease string
	// Built is the build time or tag stamp (YYYYMMDDHHMM), "" in early
	// builds; Patch the tag's ".pN" without the dot.
	Built, Patch string
	// Commit is the abbreviated openshift/microshift commit.
	Commit string
	// OKD is the OKD release tag the images come from, dashes restored:
	// "4.21.0-okd-scos.6".
	OKD string
}

// String is the RPM version the fields give back.
func (v *MicroShiftIOVersion) String() string {
	parts := []string{v.Version.String()}
	if v.Prerelease != "" {
		parts = append(parts, v.Prerelease)
	}
	if v.Built != "" {
		b := v.Built
		if v.Patch != "" {
			b += "." + v.Patch
		}
		parts = append(parts, b)
	}
	parts = append(parts, "g"+v.Commit, strings.ReplaceAll(v.OKD, "-", "_"))
	return strings.Join(parts, "_")
}

// ParseMicroShiftIOVersion parses the version of a microshift-io RPM
// (without the release): X.Y.Z, an optional _ec.N or _rc.N, an optional
// _YYYYMMDDHHMM[.pN], _g and the commit (7 to 40 hex digits), _ and the OKD
// tag (X.Y.Z-NAME). It refuses anything else, with what it expected.
func ParseMicroShiftIOVersion(s string) (*MicroShiftIOVersion, error) {
	bad := func(why string) error {
		return fmt.Errorf("%q is not a microshift-io version (X.Y.Z[_ec.N|_rc.N][_YYYYMMDDHHMM[.pN]]_gCOMMIT_OKD-TAG): %s", s, why)
	}
	if len(s) > 256 {
		return nil, bad("longer than 256 characters")
	}
	fields := strings.Split(s, "_")
	v, err := semver.StrictNewVersion(fields[0])
	if err != nil || v.Prerelease() != "" || v.Metadata() != "" {
		return nil, bad("it does not start with X.Y.Z")
	}
	out := &MicroShiftIOVersion{Version: v}
	i := 1
	if i < len(fields) && (strings.HasPrefix(fields[i], "ec.") || strings.HasPrefix(fields[i], "rc.")) {
		if !digits(fields[i][3:], 1, 4) {
			return nil, bad(fmt.Sprintf("candidate %q is not ec.N or rc.N", fields[i]))
		}
		out.Prerelease = fields[i]
		i++
	}
	if i < len(fields) && !strings.HasPrefix(fields[i], "g") {
		stamp, patch, hasPatch := strings.Cut(fields[i], ".")
		if !digits(stamp, 12, 12) || hasPatch && (!strings.HasPrefix(patch, "p") || !digits(patch[1:], 1, 4)) {
			return nil, bad(fmt.Sprintf("%q is not a build time YYYYMMDDHHMM[.pN]", fields[i]))
		}
		out.Built = stamp
		if hasPatch {
			out.Patch = patch
		}
		i++
	}
	if i >= len(fields) || !strings.HasPrefix(fields[i], "g") || !hexDigits(fields[i][1:], 7, 40) {
		return nil, bad("no _gCOMMIT (7 to 40 lower-case hex digits) after the version")
	}
	out.Commit = fields[i][1:]
	i++
	if i >= len(fields) {
		return nil, bad("no OKD tag after the commit")
	}
	out.OKD = strings.Join(fields[i:], "-")
	okdVersion, rest, _ := strings.Cut(out.OKD, "-")
	if _, err := semver.StrictNewVersion(okdVersion); err != nil || !okdTag(rest) {
		return nil, bad(fmt.Sprintf("OKD tag %q is not X.Y.Z-NAME (letters, digits, '.' and '-')", out.OKD))
	}
	return out, nil
}

// digits reports whether s is between min and max ASCII digits.
func digits(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// hexDigits reports whether s is between min and max lower-case hex digits.
func hexDigits(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// okdTag reports whether the part of an OKD tag after X.Y.Z- is one:
// letters, digits, dots and dashes, not empty, no empty part.
func okdTag(s string) bool {
	if s == "" || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "-") || strings.Contains(s, "--") {
		return false
	}
	for _, r := range s {
		if !(r == '.' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
