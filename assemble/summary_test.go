package assemble_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
)

// A summary names a shipped release by its version (a fetched 4.19.3),
// another by its stream (the embedded nightlies).
func TestSummaryReleaseName(t *testing.T) {
	for _, tc := range []struct {
		release assemble.SummaryRelease
		want    string
	}{
		{assemble.SummaryRelease{Stream: "4.19", Version: "4.19.3", Kind: "shipped"}, "4.19.3"},
		{assemble.SummaryRelease{Stream: "5.0", Version: "5.0.0", Kind: "nightly"}, "5.0"},
		{assemble.SummaryRelease{Stream: "4.18", Version: "4.18.0", Kind: "candidate"}, "4.18"},
	} {
		s := assemble.Summary{Release: tc.release, ID: strings.Repeat("a", 64)}
		if got := tc.release.Name(); got != tc.want {
			t.Errorf("%+v.Name() = %q, want %q", tc.release, got, tc.want)
		}
		if !strings.Contains(s.Line(), "release "+tc.want+",") {
			t.Errorf("Line() = %q, want release %s", s.Line(), tc.want)
		}
	}
}

// TestSummaryWarnings: a summary holds the plan's warnings (the lock's),
// osbuild's prefixed, and what writing said, each once, in that order.
func TestSummaryWarnings(t *testing.T) {
	out := &output.Dir{
		Plan:     &plan.Plan{Warnings: []string{"no CNI: ...", "microshift.ks creates volume group vg_ssd only; ..."}},
		Warnings: []string{"customizations.x is not supported"},
	}
	s := assemble.Summarize(out, "out")
	s.AddWarnings("a killed build left mirrored images in .out.tmp-1; ...", "no CNI: ...", "a killed build left mirrored images in .out.tmp-1; ...")
	want := []string{"no CNI: ...", "microshift.ks creates volume group vg_ssd only; ...", "osbuild: customizations.x is not supported", "a killed build left mirrored images in .out.tmp-1; ..."}
	if !slices.Equal(s.Warnings, want) {
		t.Errorf("summary warnings = %q\nwant %q", s.Warnings, want)
	}
	if s := assemble.Summarize(&output.Dir{Plan: &plan.Plan{}}, "out"); s.Warnings == nil || len(s.Warnings) != 0 {
		t.Errorf("no warnings = %#v, want [] (JSON [], not null)", s.Warnings)
	}
}
