package compose

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/microshift-compose/microshift-compose/components"
	"github.com/microshift-compose/microshift-compose/plan"
)

// addServicesAndFirewall adds the systemd units the selected components
// enable and disable, and the firewall they need open.
func addServicesAndFirewall(_ context.Context, in *inputs, p soFar) (soFar, error) {
	params := in.req.Config.Params()
	enabled, disabled := map[string]bool{}, map[string]bool{}
	ports, services, sources := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, pc := range p.Components {
		n := pc.Name
		c := in.cat.Components[n]
		for _, s := range c.Services.Enabled {
			enabled[s] = true
		}
		for _, s := range c.Services.Disabled {
			disabled[s] = true
		}
		for _, port := range c.Firewall.Ports {
			spec, proto, _ := strings.Cut(port, ":")
			if spec == components.NodePortsPort {
				spec = params.ServiceNodePortRange
			}
			ports[spec+":"+proto] = true
		}
		for _, s := range c.Firewall.Services {
			services[s] = true
		}
		for _, s := range c.Firewall.TrustedSources {
			if s == components.ClusterNetworkSource {
				for _, cidr := range params.ClusterNetwork {
					sources[cidr] = true
				}
				continue
			}
			sources[s] = true
		}
	}
	if h := p.Hardening; h != nil && h.CIS != nil {
		enabled[CISAuditUnit] = true
	}
	for s := range enabled {
		// A unit one component needs running wins over another's wish to
		// disable it; dropping the disable keeps the device bootable.
		delete(disabled, s)
	}
	p.Services = plan.Services{Enabled: slices.Sorted(maps.Keys(enabled)), Disabled: slices.Sorted(maps.Keys(disabled))}
	p.Firewall = plan.Firewall{Ports: sortPorts(slices.Sorted(maps.Keys(ports))), Services: slices.Sorted(maps.Keys(services)), TrustedSources: slices.Sorted(maps.Keys(sources))}
	return p, nil
}

// sortPorts orders "port:proto" entries by port number, then protocol, the
// way people read firewall rules (80 before 443 before 6443).
func sortPorts(ports []string) []string {
	num := func(p string) int {
		n := 0
		for _, r := range p {
			if r < '0' || r > '9' {
				break
			}
			n = n*10 + int(r-'0')
		}
		return n
	}
	sort.SliceStable(ports, func(i, j int) bool {
		if a, b := num(ports[i]), num(ports[j]); a != b {
			return a < b
		}
		return ports[i] < ports[j]
	})
	return ports
}
