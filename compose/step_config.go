package compose

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
)

// addConfig merges, in apply order, the config of every selected component,
// the "left out" config of every available component that is not selected,
// and the user's config.yaml, over what the plan's RPMs configure
// themselves. Two sources setting one key to different values is an error
// naming both. Every value is checked against the release's config rules:
// a plan never writes a setting its release ignores or rejects.
func addConfig(_ context.Context, in *inputs, p soFar) (soFar, error) {
	rules := in.facts.Config
	sel := selection(p.Plan)
	m := &configMerger{tree: map[string]any{}, sources: map[string]string{}, rpm: map[string]bool{}}
	// RPM drop-ins first: a component or the user agreeing with one writes
	// nothing (the RPM's file already says it), disagreeing is a conflict.
	for _, pc := range in.facts.PackageConfigs {
		if !selectsPackage(in, p.Plan, pc.Package) {
			continue
		}
		source := fmt.Sprintf("the %s RPM (%s)", pc.Package, pc.File)
		for _, path := range slices.Sorted(maps.Keys(pc.Settings)) {
			if err := m.set(path, pc.Settings[path], source); err != nil {
				return p, err
			}
			m.rpm[path] = true
			p.Notes = append(p.Notes, fmt.Sprintf("%s is %s, set by %s; the plan does not write it", path, text.ConfigValue(pc.Settings[path]), source))
		}
	}
	for _, n := range in.cat.ComponentNames() {
		c := in.cat.Components[n]
		selected := sel.has(n)
		cfg, which := c.Config.Omitted, "config.omitted"
		if selected {
			cfg, which = c.Config.Selected, "config.selected"
		} else if !c.SupportsArch(in.req.Arch) || !c.SupportsRelease(in.rel) {
			continue
		}
		if len(cfg) == 0 {
			continue
		}
		if err := microshiftconfig.Check(rules, cfg); err != nil {
			return p, fmt.Errorf("%s: %s: %w", c.Source, which, err)
		}
		label := n
		if !selected {
			label = n + " left out"
		}
		if err := m.merge("", cfg, label); err != nil {
			return p, err
		}
	}
	if err := addFIPSConfig(in, p.Plan, m); err != nil {
		return p, err
	}
	if cfg := in.req.Config; cfg != nil {
		settings, err := cfg.For(rules)
		if err != nil {
			return p, err
		}
		// The label is the base name so that the plan does not depend on
		// where the file sits; errors name the full path.
		m.userPath, m.userLabel = cfg.Source, "user "+filepath.Base(cfg.Source)
		// A value the user spells out against an RPM's drop-in is a
		// conflict even when it equals MicroShift's default: the RPM's
		// file would silently win on the device.
		for _, path := range slices.Sorted(maps.Keys(m.rpm)) {
			if v, set := cfg.Value(path); set && !reflect.DeepEqual(v, m.leaf(path)) {
				return p, m.conflict(path, m.leaf(path), m.sources[path], v, m.userLabel)
			}
		}
		// Values that change nothing stay out of the plan (and cannot
		// conflict with it).
		if err := m.merge("", settings.Changes, m.userLabel); err != nil {
			return p, err
		}
		if n := len(settings.Defaulted); n > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: %d %s unset, or MicroShift's defaults, and %s left out of the plan's config (%s)",
				m.userLabel, n, text.Plural(n, "value is", "values are"), text.Plural(n, "is", "are"), summarize(settings.Defaulted, 4)))
		}
		for _, d := range settings.DeviceChecked {
			p.Notes = append(p.Notes, m.userLabel+": "+d)
		}
	}
	if err := microshiftconfig.Check(rules, m.tree); err != nil {
		return p, fmt.Errorf("the plan's MicroShift config for release %s: %w", in.rel.Stream(), err)
	}
	if err := checkNeeds(in, sel, m); err != nil {
		return p, err
	}
	written := m.without(m.rpm)
	p.Config = written
	if len(written) > 0 {
		p.ConfigFile = in.facts.ConfigFile
		if in.facts.ConfigFile != DropInPath {
			p.Notes = append(p.Notes, fmt.Sprintf("the plan's MicroShift config goes to %s: %s", in.facts.ConfigFile, in.facts.ConfigFileWhy))
		}
	}
	for _, path := range slices.Sorted(maps.Keys(m.sources)) {
		if !m.rpm[path] {
			p.ConfigSources = append(p.ConfigSources, plan.ConfigSetting{Path: path, Value: m.leaf(path), Source: m.sources[path]})
		}
	}
	return p, nil
}

// selectsPackage reports whether a selected component installs pkg.
func selectsPackage(in *inputs, p *plan.Plan, pkg string) bool {
	for _, pc := range p.Components {
		if slices.Contains(in.cat.Components[pc.Name].Packages, pkg) {
			return true
		}
	}
	return false
}

// checkNeeds refuses a config value that only works with a component the
// plan leaves out (network.multus.status: Enabled without Multus), and one
// that turns off a component the plan selects (network.cniPlugin: none
// with OVN-K).
func checkNeeds(in *inputs, sel selected, m *configMerger) error {
	for _, path := range slices.Sorted(maps.Keys(m.sources)) {
		key := in.facts.Config.Key(path)
		if key == nil {
			continue
		}
		where := m.sources[path]
		if where == m.userLabel {
			where = m.userPath
		}
		for _, v := range leafStrings(m.leaf(path)) {
			if comp, needs := key.Needs[v]; needs {
				if !sel.has(comp) {
					return fmt.Errorf("%s: %s: %q needs component %s, which the plan leaves out; add --with %s or drop the setting", where, path, v, comp, comp)
				}
			}
			if comp, off := key.Off[v]; off {
				if sel.has(comp) {
					return fmt.Errorf("%s: %s: %q turns off %s, which the plan selects (%s: %s); drop the setting or leave it out with --without %s",
						where, path, v, comp, comp, sel.why(comp), comp)
				}
			}
		}
	}
	return nil
}

// addFIPSConfig merges the MicroShift config a FIPS device of the release
// needs, labelled FIPSConfigSource, with a note saying why.
func addFIPSConfig(in *inputs, p *plan.Plan, m *configMerger) error {
	f := in.facts.FIPS
	if !p.Hardening.FIPSOn() || f == nil || len(f.Config) == 0 {
		return nil
	}
	for _, path := range slices.Sorted(maps.Keys(f.Config)) {
		if err := m.set(path, f.Config[path], FIPSConfigSource); err != nil {
			return err
		}
	}
	p.Notes = append(p.Notes, "FIPS: "+f.ConfigWhy)
	return nil
}
