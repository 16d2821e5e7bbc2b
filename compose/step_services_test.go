package compose_test

import (
	"reflect"
	"testing"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
)

// The services step alone: the units the components enable and disable
// (enabling wins), the firewall's ports in port order with node-ports
// and cluster-network taken from the config, and --cis's audit unit.
func TestStepServices(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	for _, tc := range []struct {
		name         string
		edit         func(cat *components.Catalog, p *plan.Plan)
		wantServices plan.Services
		wantFirewall plan.Firewall
	}{
		{name: "enabling wins over disabling",
			wantServices: plan.Services{Enabled: []string{"microshift.service"}, Disabled: []string{"app-cleanup.service"}},
			wantFirewall: plan.Firewall{Ports: []string{"4789:udp", "6443:tcp"}}},
		{name: "node ports, the cluster network and --cis",
			edit: func(cat *components.Catalog, p *plan.Plan) {
				cat.Components["app"].Firewall = components.Firewall{Ports: []string{components.NodePortsPort + ":tcp", "443:tcp"}, Services: []string{"mdns"},
					TrustedSources: []string{components.ClusterNetworkSource, "169.254.169.1"}}
				p.Hardening = &plan.Hardening{CIS: &plan.CIS{Profile: compose.CISProfilePrefix + "cis"}}
			},
			wantServices: plan.Services{Enabled: []string{compose.CISAuditUnit, "microshift.service"}, Disabled: []string{"app-cleanup.service"}},
			wantFirewall: plan.Firewall{Ports: []string{"443:tcp", "4789:udp", "6443:tcp", "30000-32767:tcp"}, Services: []string{"mdns"}, TrustedSources: []string{"10.42.0.0/16", "169.254.169.1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat, p := stepCatalog(), selectedPlan("full", "core", "net-a", "app")
			if tc.edit != nil {
				tc.edit(cat, p)
			}
			got, err := runStep(t, "services", cat, rel, compose.Request{Profile: "full"}, p)
			if !checkStepErr(t, err, "") {
				return
			}
			if !reflect.DeepEqual(got.Services, tc.wantServices) || !reflect.DeepEqual(got.Firewall, tc.wantFirewall) {
				t.Errorf("services %+v firewall %+v\nwant     %+v firewall %+v", got.Services, got.Firewall, tc.wantServices, tc.wantFirewall)
			}
		})
	}
}
