package installer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/plan"
)

// Inputs are device inputs of the installer flags that the plan
// carries, so that the blueprint, the Containerfile, the kickstart and the
// lock all have them.
type Inputs struct {
	// FirewallPorts are PORT:PROTO entries (installer.ParseFirewallPort).
	FirewallPorts []string
	// CATrust are PEM CA certificate files, placed in
	// /etc/pki/ca-trust/source/anchors/ (update-ca-trust runs in the
	// kickstart's %post and the Containerfile).
	CATrust []string
}

// AddInputs adds the firewall ports and CA trust files to the plan.
func AddInputs(p *plan.Plan, in Inputs) error {
	if len(in.FirewallPorts) > 0 {
		// The plan's ports keep their order; new ones follow in the
		// order given.
		ports := slices.Clone(p.Firewall.Ports)
		var added []string
		for _, port := range in.FirewallPorts {
			if !slices.Contains(ports, port) {
				ports = append(ports, port)
				added = append(added, port)
			}
		}
		p.Firewall.Ports = ports
		// Ports the catalog opens are in the ID with the catalog; the
		// ones these add join it here. A port the plan opens already
		// (or given twice) changes nothing, so neither does naming it.
		if len(added) > 0 {
			if err := p.SetInput("firewall_ports", added); err != nil {
				return err
			}
		}
	}
	var files []plan.File
	names := map[string]string{}
	for _, file := range in.CATrust {
		data, err := inputfile.ReadCA("--ca-trust", file)
		if err != nil {
			return err
		}
		name := anchorName(file)
		if prev, ok := names[name]; ok {
			return fmt.Errorf("--ca-trust %s and %s would both be %s/%s: rename one", prev, file, CATrustDir, name)
		}
		names[name] = file
		files = append(files, plan.File{Path: CATrustDir + "/" + name, Mode: "0644", Source: "--ca-trust " + file, Data: data})
	}
	if len(files) == 0 {
		return nil
	}
	return p.AddDeviceFiles(files)
}

// anchorName is the device name of a CA file: its base name with the
// characters update-ca-trust and the generators take, and .pem.
func anchorName(file string) string {
	base := file
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".pem"), ".crt")
	var b strings.Builder
	for _, r := range base {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := strings.TrimLeft(b.String(), ".")
	if name == "" {
		name = "ca"
	}
	return "microshift-compose-" + name + ".pem"
}
