package compose_test

import (
	"reflect"
	"testing"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
)

// The config step alone: the selected components' config.selected and the
// left-out ones' config.omitted merged, each value with its source, and
// the refusals of a conflict, a value the release rejects, and a value that
// needs a component the plan leaves out.
func TestStepConfig(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	logLevel := func(v string) map[string]any { return map[string]any{"debugging": map[string]any{"logLevel": v}} }
	for _, tc := range []struct {
		name        string
		edit        func(cat *components.Catalog)
		want        map[string]any
		wantSources []plan.ConfigSetting
		wantErr     string
	}{
		{name: "no config", want: map[string]any{}},
		{name: "a selected component's and a left-out one's",
			edit: func(cat *components.Catalog) {
				cat.Components["app"].Config.Selected = logLevel("Debug")
				cat.Components["net-b"].Config.Omitted = map[string]any{"network": map[string]any{"multus": map[string]any{"status": "Disabled"}}}
			},
			want: map[string]any{"debugging": map[string]any{"logLevel": "Debug"}, "network": map[string]any{"multus": map[string]any{"status": "Disabled"}}},
			wantSources: []plan.ConfigSetting{
				{Path: "debugging.logLevel", Value: "Debug", Source: "app"},
				{Path: "network.multus.status", Value: "Disabled", Source: "net-b left out"},
			}},
		{name: "two components disagree",
			edit: func(cat *components.Catalog) {
				cat.Components["core"].Config.Selected = logLevel("Debug")
				cat.Components["app"].Config.Selected = logLevel("Trace")
			},
			wantErr: `config conflict at debugging.logLevel: core sets "Debug", app sets "Trace"`},
		{name: "a value the release rejects",
			edit: func(cat *components.Catalog) {
				cat.Components["app"].Source = "app/component.toml"
				cat.Components["app"].Config.Selected = logLevel("Loud")
			},
			wantErr: `app/component.toml: config.selected: debugging.logLevel: "Loud" is not one of "", "Normal", "Debug", "Trace", "TraceAll" (MicroShift 5.0)`},
		{name: "a value that needs a component the plan leaves out",
			edit: func(cat *components.Catalog) {
				cat.Components["app"].Config.Selected = map[string]any{"network": map[string]any{"multus": map[string]any{"status": "Enabled"}}}
			},
			wantErr: `app: network.multus.status: "Enabled" needs component multus, which the plan leaves out; add --with multus or drop the setting`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := stepCatalog()
			if tc.edit != nil {
				tc.edit(cat)
			}
			p, err := runStep(t, "config", cat, rel, compose.Request{Profile: "full"}, selectedPlan("full", "core", "net-a", "app"))
			if !checkStepErr(t, err, tc.wantErr) {
				return
			}
			if !reflect.DeepEqual(p.Config, tc.want) || !reflect.DeepEqual(p.ConfigSources, tc.wantSources) {
				t.Errorf("config %v sources %+v\nwant   %v sources %+v", p.Config, p.ConfigSources, tc.want, tc.wantSources)
			}
			wantFile := ""
			if len(tc.want) > 0 {
				wantFile = compose.DropInPath
			}
			if p.ConfigFile != wantFile {
				t.Errorf("config file %q, want %q", p.ConfigFile, wantFile)
			}
		})
	}
}
