package releases_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/microshift-compose/microshift-compose/releases"
)

// The version forms microshift-io's build-rpms.sh writes, and what each is.
func TestParseMicroShiftIOVersion(t *testing.T) {
	for _, tc := range []struct {
		in                                      string
		version, pre, built, patch, commit, okd string
	}{
		{"4.21.0_202511271015_ga9cd00b34_4.21.0_okd_scos.ec.5", "4.21.0", "", "202511271015", "", "a9cd00b34", "4.21.0-okd-scos.ec.5"},
		{"4.20.0_202510201126.p0_g1c4675ace_4.20.0_okd_scos.6", "4.20.0", "", "202510201126", "p0", "1c4675ace", "4.20.0-okd-scos.6"},
		{"4.21.0_202511200000_ga9cd00b34_4.21.0_okd_scos.6", "4.21.0", "", "202511200000", "", "a9cd00b34", "4.21.0-okd-scos.6"},
		{"4.21.0_rc.1_202511201126.p0_gabcdef0_4.21.0_okd_scos.6", "4.21.0", "rc.1", "202511201126", "p0", "abcdef0", "4.21.0-okd-scos.6"},
		{"4.21.0_ga9cd00b34_4.21.0_okd_scos.ec.5", "4.21.0", "", "", "", "a9cd00b34", "4.21.0-okd-scos.ec.5"},
		{"5.0.0_202607010000_g0123456789abcdef0123456789abcdef01234567_4.22.0_okd_scos.1", "5.0.0", "", "202607010000", "", "0123456789abcdef0123456789abcdef01234567", "4.22.0-okd-scos.1"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			v, err := releases.ParseMicroShiftIOVersion(tc.in)
			if err != nil {
				t.Fatalf("ParseMicroShiftIOVersion() = %v", err)
			}
			if v.Version.String() != tc.version || v.Prerelease != tc.pre || v.Built != tc.built || v.Patch != tc.patch || v.Commit != tc.commit || v.OKD != tc.okd {
				t.Errorf("= %+v (version %s), want %s %q %q %q %s %s", v, v.Version, tc.version, tc.pre, tc.built, tc.patch, tc.commit, tc.okd)
			}
			if v.String() != tc.in {
				t.Errorf("String() = %q, want the input back", v.String())
			}
		})
	}
	for _, tc := range []struct{ in, why string }{
		{"4.21.0", "no _gCOMMIT"},
		{"4.18.7", "no _gCOMMIT"},
		{"4.21", "X.Y.Z"},
		{"4.21.0-1_ga9cd00b34_4.21.0_okd_scos.6", "X.Y.Z"},
		{"4.21.0_2025112710_ga9cd00b34_4.21.0_okd_scos.6", "build time"},
		{"4.21.0_202511271015.q1_ga9cd00b34_4.21.0_okd_scos.6", "build time"},
		{"4.21.0_ec.x_ga9cd00b34_4.21.0_okd_scos.6", "ec.N or rc.N"},
		{"4.21.0_gA9CD00B34_4.21.0_okd_scos.6", "_gCOMMIT"},
		{"4.21.0_g123_4.21.0_okd_scos.6", "_gCOMMIT"},
		{"4.21.0_ga9cd00b34", "no OKD tag"},
		{"4.21.0_ga9cd00b34_okd_scos.6", "OKD tag"},
		{"4.21.0_ga9cd00b34_4.21.0", "OKD tag"},
		{"4.21.0_ga9cd00b34_4.21.0_okd__scos", "OKD tag"},
		{"4.21.0_ga9cd00b34_4.21.0_okd_", "OKD tag"},
		{"4.21.0_ga9cd00b34_4.21.0_okd;rm", "OKD tag"},
		{strings.Repeat("4", 300), "256"},
	} {
		_, err := releases.ParseMicroShiftIOVersion(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.why) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseMicroShiftIOVersion(%q) = %v, want an error saying %q", tc.in, err, tc.why)
		}
	}
}

// FuzzParseMicroShiftIOVersion: no panic; a version it takes gives itself
// back, is a valid RPM version (no dash, printable ASCII), and its OKD tag
// has no underscore.
func FuzzParseMicroShiftIOVersion(f *testing.F) {
	for _, s := range []string{
		"4.21.0_202511271015_ga9cd00b34_4.21.0_okd_scos.ec.5",
		"4.20.0_202510201126.p0_g1c4675ace_4.20.0_okd_scos.6",
		"4.21.0_rc.1_202511201126.p0_gabcdef0_4.21.0_okd_scos.6",
		"4.21.0_ga9cd00b34_4.21.0_okd_scos.ec.5",
		"4.21.0_g_4.21.0", "_", "4.21.0__", "4.21.0_ec._g1234567_1.2.3_a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := releases.ParseMicroShiftIOVersion(s)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") || !utf8.ValidString(err.Error()) && utf8.ValidString(s) {
				t.Fatalf("error is not one valid line: %q", err)
			}
			return
		}
		if got := v.String(); got != s {
			t.Fatalf("String() = %q, parsed from %q", got, s)
		}
		if strings.ContainsAny(s, "- \t\n") || strings.Contains(v.OKD, "_") || v.Version == nil || v.Commit == "" {
			t.Fatalf("accepted %q: %+v", s, v)
		}
		for _, r := range s {
			if r < '!' || r > '~' {
				t.Fatalf("accepted a non-printable or non-ASCII version %q", s)
			}
		}
	})
}
