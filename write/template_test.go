package write_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/write"
)

func TestExpandOutput(t *testing.T) {
	p := &plan.Plan{ID: strings.Repeat("ab", 32), Profile: "full", Arch: "x86_64", Release: plan.Release{Stream: "5.0"}}
	for _, tc := range []struct{ tmpl, want, err string }{
		{tmpl: "out", want: "out"},
		{tmpl: "out/{id}", want: "out/" + p.ID},
		{tmpl: "../out/{release}-{profile}-{arch}", want: "../out/5.0-full-x86_64"},
		{tmpl: "out/{hash}", err: `--output out/{hash}: unknown placeholder in "{hash}" (have {id}, {profile}, {arch}, {release})`},
		{tmpl: "out/{id", err: `--output out/{id: unknown placeholder in "{id" (have {id}, {profile}, {arch}, {release})`},
		{tmpl: "out/{id}/..", err: `--output out/{id}/..: ".." after a placeholder steps out of the directory it names`},
	} {
		got, err := write.Expand(tc.tmpl, p)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("ExpandOutput(%q) = %q, %v; want error %q", tc.tmpl, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ExpandOutput(%q) = %q, %v; want %q", tc.tmpl, got, err, tc.want)
		}
	}
	bad := &plan.Plan{ID: "x", Profile: "../etc", Arch: "x86_64"}
	if _, err := write.Expand("out/{profile}", bad); err == nil || err.Error() != `--output out/{profile}: {profile} is "../etc", which is not a directory name` {
		t.Errorf("ExpandOutput(profile ../etc) = %v", err)
	}
}

// FuzzExpandOutput: an expanded --output has no placeholder left, and a
// placeholder never lets the path climb out of the directory it names.
func FuzzExpandOutput(f *testing.F) {
	for _, s := range []string{"out/{id}", "{profile}/{arch}", "a/{id}/../b", "{", "}", "{{id}}", "x/{release}/.."} {
		f.Add(s, "full")
	}
	f.Fuzz(func(t *testing.T, tmpl, profile string) {
		p := &plan.Plan{ID: strings.Repeat("0f", 32), Profile: profile, Arch: "aarch64", Release: plan.Release{Stream: "4.19"}}
		got, err := write.Expand(tmpl, p)
		if err != nil {
			return
		}
		if strings.ContainsAny(tmpl, "{}") && strings.ContainsAny(got, "{}") && !strings.ContainsAny(profile, "{}") {
			t.Fatalf("ExpandOutput(%q) = %q: a placeholder is left", tmpl, got)
		}
		if strings.Contains(tmpl, "{") {
			prefix, _, _ := strings.Cut(filepath.ToSlash(tmpl), "{")
			if strings.Contains(prefix, "/") {
				prefix = prefix[:strings.LastIndex(prefix, "/")]
				if rel, err := filepath.Rel(filepath.Clean(prefix), filepath.Clean(got)); err == nil && (rel == ".." || strings.HasPrefix(rel, "../")) {
					t.Fatalf("ExpandOutput(%q) = %q climbs out of %q", tmpl, got, prefix)
				}
			}
		}
	})
}
