package compose_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
)

// The unused step alone: an image of a rendering component that no
// rendered manifest and no device file uses is warned about; images of
// components that render nothing are not looked at.
func TestStepUnused(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	web := "quay.io/x/web@sha256:" + strings.Repeat("c", 64)
	pod := "quay.io/x/pod@sha256:" + strings.Repeat("a", 64)
	for _, tc := range []struct {
		name         string
		edit         func(p *plan.Plan)
		wantWarnings []string
	}{
		{name: "used by no manifest and no file", wantWarnings: []string{`component "app": image "web" (` + web + `) is embedded but no rendered manifest or device file uses it`}},
		{name: "used by a manifest", edit: func(p *plan.Plan) { p.Manifests = []plan.Manifest{{Component: "app", Images: []string{web}}} }},
		{name: "named in a device file", edit: func(p *plan.Plan) {
			p.Files = []plan.File{{Path: "/etc/app/images", Data: []byte("web=" + web + "\n")}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := stepCatalog()
			webApp(cat, map[string]string{"quay.io/x/web": "web"})
			p := selectedPlan("full", "core", "net-a", "app")
			p.Images = []plan.Image{
				{Ref: pod, Pinned: true, Uses: []plan.ImageUse{{Component: "core", File: "release-x86_64.json", Key: "pod"}}},
				{Ref: web, Pinned: true, Uses: []plan.ImageUse{{Component: "app", File: "release-x86_64.json", Key: "web"}}},
			}
			if tc.edit != nil {
				tc.edit(p)
			}
			got, err := runStep(t, "unused", cat, rel, compose.Request{Profile: "full"}, p)
			if checkStepErr(t, err, "") && !slices.Equal(got.Warnings, tc.wantWarnings) {
				t.Errorf("warnings = %q\nwant       %q", got.Warnings, tc.wantWarnings)
			}
		})
	}
}
