package compose_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// The images step alone: the selected components' keys looked up in the
// release file, by reference; tag-only references refused or, with
// --allow-unpinned, warned about; a key no component claims refused.
func TestStepImages(t *testing.T) {
	pod := "quay.io/x/pod@sha256:" + strings.Repeat("a", 64)
	netA := "quay.io/x/net-a@sha256:" + strings.Repeat("b", 64)
	unclaimed, err := releases.ParseFile("release-x86_64.json", "release-x86_64.json",
		[]byte(`{"release": {"base": "5.0.0"}, "images": {"pod": "`+pod+`", "net-a": "`+netA+`", "extra": "quay.io/x/extra:1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	unclaimedRel, err := releases.New("steps", []*releases.File{unclaimed})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		rel           *releases.Release
		selected      []string
		allowUnpinned bool
		want          []plan.Image
		wantWarnings  []string
		wantErr       string
		wantErrIs     error
	}{
		{name: "core", rel: stepRelease(t, "5.0.0", false), selected: []string{"core"},
			want: []plan.Image{{Ref: pod, Pinned: true, Uses: []plan.ImageUse{{Component: "core", File: "release-x86_64.json", Key: "pod"}}}}},
		{name: "core and net-a, by reference", rel: stepRelease(t, "5.0.0", false), selected: []string{"core", "net-a", "app"},
			want: []plan.Image{
				{Ref: netA, Pinned: true, Uses: []plan.ImageUse{{Component: "net-a", File: "release-x86_64.json", Key: "net-a"}}},
				{Ref: pod, Pinned: true, Uses: []plan.ImageUse{{Component: "core", File: "release-x86_64.json", Key: "pod"}}},
			}},
		{name: "a tag-only image", rel: stepRelease(t, "5.0.0", true), selected: []string{"core", "net-a"}, wantErrIs: compose.ErrUnpinned,
			wantErr: `component "net-a" image "net-a" (release-x86_64.json): image is not pinned by digest: quay.io/x/net-a:1.0; pin it in the release file, or pass --allow-unpinned to embed it by tag`},
		{name: "a tag-only image, allowed", rel: stepRelease(t, "5.0.0", true), selected: []string{"core", "net-a"}, allowUnpinned: true,
			want: []plan.Image{
				{Ref: "quay.io/x/net-a:1.0", Uses: []plan.ImageUse{{Component: "net-a", File: "release-x86_64.json", Key: "net-a"}}},
				{Ref: pod, Pinned: true, Uses: []plan.ImageUse{{Component: "core", File: "release-x86_64.json", Key: "pod"}}},
			},
			wantWarnings: []string{`component "net-a" image "net-a" (release-x86_64.json) is not pinned by digest: quay.io/x/net-a:1.0 (allowed by --allow-unpinned; the device may not boot offline reproducibly)`}},
		{name: "a key no component claims", rel: unclaimedRel, selected: []string{"core"},
			wantErr: `release 5.0 (steps): release-x86_64.json: image key "extra" is not claimed by any component, so no plan would embed it; add it to a component's images.keys (see --catalog)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := runStep(t, "images", nil, tc.rel, compose.Request{Profile: "full", AllowUnpinned: tc.allowUnpinned}, selectedPlan("full", tc.selected...))
			if !checkStepErr(t, err, tc.wantErr) {
				if tc.wantErrIs != nil && !errors.Is(err, tc.wantErrIs) {
					t.Errorf("err does not wrap %v", tc.wantErrIs)
				}
				return
			}
			if !reflect.DeepEqual(p.Images, tc.want) {
				t.Errorf("images:\n%+v\nwant\n%+v", p.Images, tc.want)
			}
			if !slices.Equal(p.Warnings, tc.wantWarnings) {
				t.Errorf("warnings = %q, want %q", p.Warnings, tc.wantWarnings)
			}
		})
	}
}
