package compose_test

import (
	"testing"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/compose/lvmdconfig"
)

// The check step alone, on selections made by hand: a selection it keeps,
// and each refusal.
func TestStepCheck(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	for _, tc := range []struct {
		name     string
		selected []string
		req      compose.Request
		wantErr  string
	}{
		{name: "core, a CNI and app", selected: []string{"core", "net-a", "app"}},
		{name: "a conflict", selected: []string{"core", "net-a", "net-b", "app"},
			wantErr: "app conflicts with net-b (app: profile full; net-b: profile full); leave one out with --without"},
		{name: "two providers", selected: []string{"core", "net-a", "net-b"},
			wantErr: "net-a and net-b both provide cni and a plan may have only one (net-a: profile full; net-b: profile full); leave one out with --without"},
		{name: "no MicroShift", selected: []string{"net-a"}, req: compose.Request{Without: []string{"core"}},
			wantErr: "profile full with --without core does not install MicroShift: none of net-a has the microshift RPM; every plan needs core (it installs the microshift RPM)"},
		{name: "nothing", wantErr: "profile full selects no components; every plan needs core (it installs the microshift RPM)"},
		{name: "--lvmd without LVMS", selected: []string{"core"}, req: compose.Request{Lvmd: &lvmdconfig.Config{Source: "lvmd.yaml"}},
			wantErr: "--lvmd lvmd.yaml: storage-lvms is not in the plan, so nothing would read it; select it (--with storage-lvms, or profile storage-only or full) or drop --lvmd"},
		{name: "--storage-class without --lvmd", selected: []string{"core"}, req: compose.Request{StorageClasses: []lvmdconfig.ClassChoice{{Class: "thin", Flag: "thin=fast"}}},
			wantErr: `--storage-class "thin=fast" names a device class of --lvmd, which is not given`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req
			req.Profile = "full"
			p := selectedPlan("full", tc.selected...)
			before := len(p.Components)
			got, err := runStep(t, "check", nil, rel, req, p)
			if checkStepErr(t, err, tc.wantErr) && len(got.Components) != before {
				t.Errorf("the check step changed the selection: %v", got.Components)
			}
		})
	}
}
