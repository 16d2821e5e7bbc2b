package compose_test

import (
	"reflect"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
)

// The select step alone: the profile, --with and --without closed over
// requirements and default providers, each component with its reasons in
// apply order, and the refusals of a selection that cannot be closed.
func TestStepSelect(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	cniFor := func(by string) plan.Reason { return providerFor("cni", by) }
	for _, tc := range []struct {
		name    string
		req     compose.Request
		want    []plan.Component
		wantErr string
	}{
		{name: "minimal", req: compose.Request{Profile: "minimal"},
			want: []plan.Component{{Name: "core", Order: 0, Description: "core", Provides: []string{}, Reasons: []plan.Reason{profileReason("minimal")}}}},
		{name: "--with app pulls in the default CNI", req: compose.Request{Profile: "minimal", With: []string{"app"}},
			want: []plan.Component{
				{Name: "core", Description: "core", Provides: []string{}, Reasons: []plan.Reason{profileReason("minimal"), requiredBy("app"), requiredBy("net-a")}},
				{Name: "net-a", Order: 1, Description: "net-a", Provides: []string{"cni"}, Reasons: []plan.Reason{cniFor("app")}},
				{Name: "app", Order: 5, Description: "app", Provides: []string{}, Reasons: []plan.Reason{withReason}},
			}},
		{name: "a CNI chosen with --with is kept", req: compose.Request{Profile: "minimal", With: []string{"app", "net-b"}},
			want: []plan.Component{
				{Name: "core", Description: "core", Provides: []string{}, Reasons: []plan.Reason{profileReason("minimal"), requiredBy("app"), requiredBy("net-b")}},
				{Name: "net-b", Order: 2, Description: "net-b", Provides: []string{"cni"}, Reasons: []plan.Reason{withReason}},
				{Name: "app", Order: 5, Description: "app", Provides: []string{}, Reasons: []plan.Reason{withReason}},
			}},
		{name: "--without a requirement", req: compose.Request{Profile: "minimal", With: []string{"app"}, Without: []string{"core"}},
			wantErr: "--without core: app requires it (app: --with)"},
		{name: "--without the default provider", req: compose.Request{Profile: "full", Without: []string{"net-a"}},
			wantErr: "--without net-a: app requires a cni provider and net-a is its default (app: profile full); select another provider with --with net-b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := runStep(t, "select", nil, rel, tc.req, &plan.Plan{})
			if !checkStepErr(t, err, tc.wantErr) {
				return
			}
			if !reflect.DeepEqual(p.Components, tc.want) {
				t.Errorf("components:\n%+v\nwant\n%+v", p.Components, tc.want)
			}
			caps := map[string]string{}
			for _, c := range tc.want {
				for _, capName := range c.Provides {
					caps[capName] = c.Name
				}
			}
			if !reflect.DeepEqual(p.Capabilities, caps) {
				t.Errorf("capabilities = %v, want %v", p.Capabilities, caps)
			}
		})
	}
}
