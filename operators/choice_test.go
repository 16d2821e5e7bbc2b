package operators_test

import (
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/operators"
)

func TestParseChoice(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want operators.Choice
		err  string
	}{
		{in: "etcd", want: operators.Choice{Package: "etcd"}},
		{in: "etcd:stable", want: operators.Choice{Package: "etcd", Channel: "stable"}},
		{in: "etcd:stable-v4.18@>=0.9.2 <1.0.0", want: operators.Choice{Package: "etcd", Channel: "stable-v4.18", Versions: ">=0.9.2 <1.0.0"}},
		{in: "etcd@>=0.9.2, <1.0.0,approval=Manual", want: operators.Choice{Package: "etcd", Versions: ">=0.9.2, <1.0.0", Approval: "Manual"}},
		{in: "etcd,namespace=db,approval=Automatic", want: operators.Choice{Package: "etcd", Approval: "Automatic", Namespace: "db"}},
		{in: "", err: "no package"},
		{in: ":stable", err: "no package"},
		{in: "etcd@", err: "empty version range"},
		{in: "etcd:@1.0.0", err: "empty channel"},
		{in: "etcd@>=banana", err: "not a version range"},
		{in: "etcd,approval=manual", err: `approval "manual": want Automatic or Manual`},
		{in: "etcd,namespace=Not_A_Namespace", err: `namespace "Not_A_Namespace"`},
		{in: "etcd,approval=Manual,approval=Manual", err: "approval given twice"},
		{in: "quay.io/etcd", err: "not a package name"},
		{in: "etcd:a/b", err: "not a channel name"},
		{in: "etcd\n", err: "control character"},
	} {
		got, err := operators.ParseChoice(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseChoice(%q) = %v, want one line with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseChoice(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		// The flag form parses back to the same choice.
		again, err := operators.ParseChoice(got.String())
		if err != nil || again != got {
			t.Errorf("ParseChoice(%q.String() = %q) = %+v, %v", tc.in, got.String(), again, err)
		}
	}
}

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		rng     string
		in, out []string
	}{
		{">=1.2.0 <2.0.0", []string{"1.2.0", "1.9.9", "1.5.0-rc.1"}, []string{"1.1.9", "2.0.0"}},
		{">=1.2.0, <2.0.0", []string{"1.2.0"}, []string{"2.0.0"}},
		{"1.2.3", []string{"1.2.3"}, []string{"1.2.4", "1.2.3-rc.1"}},
		{"<1.0.0 || >=3.0.0", []string{"0.9.0", "3.0.0"}, []string{"1.0.0", "2.5.0"}},
		{">4.1.0 <=4.3.0", []string{"4.3.0", "4.2.0"}, []string{"4.1.0", "4.3.1"}},
	} {
		r, err := operators.ParseRange(tc.rng)
		if err != nil {
			t.Fatalf("ParseRange(%q): %v", tc.rng, err)
		}
		for _, v := range tc.in {
			if !r.Contains(semver.MustParse(v)) {
				t.Errorf("%q does not contain %s", tc.rng, v)
			}
		}
		for _, v := range tc.out {
			if r.Contains(semver.MustParse(v)) {
				t.Errorf("%q contains %s", tc.rng, v)
			}
		}
	}
	for _, bad := range []string{"", "  ", ">=banana", "1.2.3 ||", strings.Repeat(">=1.0.0 ", 200), "1.0\x00"} {
		if _, err := operators.ParseRange(bad); err == nil {
			t.Errorf("ParseRange(%q) = nil error", bad)
		}
	}
}
