package compose

import (
	"context"
	"fmt"
)

// addCapabilityWarnings says what the device does without a provider of a
// capability, where the release knowledge knows it (no CNI: greenboot red).
// A device that can never become healthy without it (no CNI on 4.18) is
// refused unless the request accepts it.
func addCapabilityWarnings(_ context.Context, in *inputs, p soFar) (soFar, error) {
	for _, capName := range in.cat.CapabilityNames() {
		if _, ok := p.Capabilities[capName]; ok {
			continue
		}
		w, ok := in.facts.MissingCapability(capName)
		if !ok {
			continue
		}
		if !w.RedBoot {
			p.Warnings = append(p.Warnings, w.Warning)
			continue
		}
		if !in.req.AllowRedBoot {
			add := ""
			if d := in.defaultProvider(capName); d != "" {
				add = " (--with " + d + ")"
			}
			return p, fmt.Errorf("release %s: %w: %s; add a %s provider%s, or pass --allow-red-boot to build a device that rolls back on every boot",
				in.rel.Stream(), ErrRedBoot, w.Warning, capName, add)
		}
		p.Warnings = append(p.Warnings, w.Warning+" (built anyway: --allow-red-boot)")
	}
	return p, nil
}
