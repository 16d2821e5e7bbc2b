package compose_test

import (
	"reflect"
	"testing"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
)

// The device files step alone: the components' files (templates rendered
// with the config's parameters), not yet sorted, and the refusals of a bad
// template. The files rendered from the plan (its config, --cis's) are
// not the step's (render/config, render/hardening).
func TestStepDeviceFiles(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	appFile := func(f components.File) func(*components.Catalog, *plan.Plan) {
		return func(cat *components.Catalog, _ *plan.Plan) {
			cat.Components["app"].Source = "app/component.toml"
			cat.Components["app"].Files = []components.File{f}
		}
	}
	for _, tc := range []struct {
		name    string
		edit    func(cat *components.Catalog, p *plan.Plan)
		want    []plan.File // without Data, checked by wantData
		data    map[string]string
		wantErr string
	}{
		{name: "none"},
		{name: "a component's file, its mode made four digits",
			edit: appFile(components.File{Path: "/etc/app/app.conf", Mode: "600", Content: "x=1\n"}),
			want: []plan.File{{Path: "/etc/app/app.conf", Mode: "0600", Component: "app"}}, data: map[string]string{"/etc/app/app.conf": "x=1\n"}},
		{name: "a template",
			edit: appFile(components.File{Path: "/etc/app/ports", Content: "{{.ServiceNodePortRange}}", Template: true}),
			want: []plan.File{{Path: "/etc/app/ports", Mode: "0644", Component: "app"}}, data: map[string]string{"/etc/app/ports": "30000-32767"}},
		{name: "not the files rendered from the plan: the config drop-in, --cis's",
			edit: func(cat *components.Catalog, p *plan.Plan) {
				appFile(components.File{Path: "/etc/app/app.conf", Content: "x"})(cat, p)
				p.Config, p.ConfigFile = map[string]any{"debugging": map[string]any{"logLevel": "Debug"}}, compose.DropInPath
				p.Hardening = &plan.Hardening{CIS: &plan.CIS{Profile: compose.CISProfilePrefix + "cis"}}
			},
			want: []plan.File{{Path: "/etc/app/app.conf", Mode: "0644", Component: "app"}}},
		{name: "a template that does not parse", edit: appFile(components.File{Path: "/etc/app/t", Content: "{{.Nope", Template: true}),
			wantErr: "app/component.toml: parsing template for /etc/app/t: template: /etc/app/t:1: unclosed action"},
		{name: "a template that loops too long", edit: appFile(components.File{Path: "/etc/app/t", Content: "{{range 100000}}{{end}}", Template: true}),
			wantErr: "app/component.toml: template for /etc/app/t: number 100000 is larger than 10000"},
		{name: "a template naming no parameter", edit: appFile(components.File{Path: "/etc/app/t", Content: "{{.Nope}}", Template: true}),
			wantErr: `app/component.toml: rendering template for /etc/app/t: template: /etc/app/t:1:2: executing "/etc/app/t" at <.Nope>: can't evaluate field Nope in type microshiftconfig.Params`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat, p := stepCatalog(), selectedPlan("full", "core", "net-a", "app")
			if tc.edit != nil {
				tc.edit(cat, p)
			}
			got, err := runStep(t, "devicefiles", cat, rel, compose.Request{Profile: "full"}, p)
			if !checkStepErr(t, err, tc.wantErr) {
				return
			}
			var files []plan.File
			for _, f := range got.Files {
				if want, ok := tc.data[f.Path]; ok && string(f.Data) != want {
					t.Errorf("%s = %q, want %q", f.Path, f.Data, want)
				}
				f.Data = nil
				files = append(files, f)
			}
			if !reflect.DeepEqual(files, tc.want) {
				t.Errorf("files:\n%+v\nwant\n%+v", files, tc.want)
			}
		})
	}
}
