package releases_test

import (
	"testing"

	"github.com/microshift-compose/microshift-compose/releases"
)

func TestParseArch(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want releases.Arch
		err  string
	}{
		{in: "x86_64", want: releases.X86_64},
		{in: "amd64", want: releases.X86_64},
		{in: "aarch64", want: releases.AArch64},
		{in: "arm64", want: releases.AArch64},
		{in: " arm64\n", want: releases.AArch64},
		{in: "x86-64", err: `unknown arch "x86-64"; did you mean "x86_64"?`},
		{in: "aarch46", err: `unknown arch "aarch46"; did you mean "aarch64"?`},
		{in: "amd6", err: `unknown arch "amd6"; did you mean "amd64"?`},
		{in: "X86_64", err: `unknown arch "X86_64"; did you mean "x86_64"?`},
		{in: "arm", err: `unknown arch "arm" (want one of x86_64, aarch64, amd64, arm64)`},
		{in: "ppc64le", err: `unknown arch "ppc64le" (want one of x86_64, aarch64, amd64, arm64)`},
		{in: "", err: `unknown arch "" (want one of x86_64, aarch64, amd64, arm64)`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := releases.ParseArch(tc.in)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("ParseArch(%q) = %q, %v; want error %q", tc.in, got, err, tc.err)
				}
				if got != "" {
					t.Errorf("ParseArch(%q) returned arch %q with an error", tc.in, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseArch(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestArchNames(t *testing.T) {
	for _, tc := range []struct {
		arch          releases.Arch
		goarch, uname string
	}{
		{releases.X86_64, "amd64", "x86_64"},
		{releases.AArch64, "arm64", "aarch64"},
		{releases.Arch("s390x"), "", "s390x"},
	} {
		if got := tc.arch.GOARCH(); got != tc.goarch {
			t.Errorf("%s.GOARCH() = %q, want %q", tc.arch, got, tc.goarch)
		}
		if got := tc.arch.String(); got != tc.uname {
			t.Errorf("Arch(%q).String() = %q, want %q", string(tc.arch), got, tc.uname)
		}
	}
	// Both spellings map back to the same Arch.
	for _, a := range releases.Arches {
		back, err := releases.ParseArch(a.GOARCH())
		if err != nil || back != a {
			t.Errorf("ParseArch(%s.GOARCH()) = %q, %v; want %q", a, back, err, a)
		}
	}
	if len(releases.Arches) != 2 || releases.Arches[0] != releases.X86_64 || releases.Arches[1] != releases.AArch64 {
		t.Errorf("Arches = %v, want [x86_64 aarch64]", releases.Arches)
	}
}
