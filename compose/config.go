package compose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/compose/microshiftconfig"
	"github.com/microshift-compose/microshift-compose/internal/safetext"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
)

// addConfig merges, in apply order, the config of every selected component,
// the "left out" config of every available component that is not selected,
// and the user's config.yaml, over what the plan's RPMs configure
// themselves. Two sources setting one key to different values is an error
// naming both. Every value is checked against the release's config rules:
// a plan never writes a setting its release ignores or rejects.
func (r *resolver) addConfig(p *plan.Plan) error {
	rules := r.facts.Config
	m := &configMerger{tree: map[string]any{}, sources: map[string]string{}, rpm: map[string]bool{}}
	// RPM drop-ins first: a component or the user agreeing with one writes
	// nothing (the RPM's file already says it), disagreeing is a conflict.
	for _, pc := range r.facts.PackageConfigs {
		if !r.selectsPackage(pc.Package) {
			continue
		}
		source := fmt.Sprintf("the %s RPM (%s)", pc.Package, pc.File)
		for _, path := range slices.Sorted(maps.Keys(pc.Settings)) {
			if err := m.set(path, pc.Settings[path], source); err != nil {
				return err
			}
			m.rpm[path] = true
			p.Notes = append(p.Notes, fmt.Sprintf("%s is %s, set by %s; the plan does not write it", path, show(pc.Settings[path]), source))
		}
	}
	for _, n := range r.cat.ComponentNames() {
		c := r.cat.Components[n]
		_, selected := r.reasons[n]
		cfg, which := c.Config.Omitted, "config.omitted"
		if selected {
			cfg, which = c.Config.Selected, "config.selected"
		} else if !c.SupportsArch(r.req.Arch) || !c.SupportsRelease(r.rel) {
			continue
		}
		if len(cfg) == 0 {
			continue
		}
		if err := microshiftconfig.Check(rules, cfg); err != nil {
			return fmt.Errorf("%s: %s: %w", c.Source, which, err)
		}
		label := n
		if !selected {
			label = n + " left out"
		}
		if err := m.merge("", cfg, label); err != nil {
			return err
		}
	}
	if err := r.addFIPSConfig(p, m); err != nil {
		return err
	}
	if cfg := r.req.Config; cfg != nil {
		settings, err := cfg.For(rules)
		if err != nil {
			return err
		}
		// The label is the base name so that the plan does not depend on
		// where the file sits; errors name the full path.
		m.userPath, m.userLabel = cfg.Source, "user "+filepath.Base(cfg.Source)
		// A value the user spells out against an RPM's drop-in is a
		// conflict even when it equals MicroShift's default: the RPM's
		// file would silently win on the device.
		for _, path := range slices.Sorted(maps.Keys(m.rpm)) {
			if v, set := cfg.Value(path); set && !reflect.DeepEqual(v, m.leaf(path)) {
				return m.conflict(path, m.leaf(path), m.sources[path], v, m.userLabel)
			}
		}
		// Values that change nothing stay out of the plan (and cannot
		// conflict with it).
		if err := m.merge("", settings.Changes, m.userLabel); err != nil {
			return err
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
		return fmt.Errorf("the plan's MicroShift config for release %s: %w", r.rel.Stream(), err)
	}
	if err := r.checkNeeds(m); err != nil {
		return err
	}
	written := m.without(m.rpm)
	p.Config = written
	if len(written) > 0 {
		p.ConfigFile = r.facts.ConfigFile
		if r.facts.ConfigFile != DropInPath {
			p.Notes = append(p.Notes, fmt.Sprintf("the plan's MicroShift config goes to %s: %s", r.facts.ConfigFile, r.facts.ConfigFileWhy))
		}
	}
	for _, path := range slices.Sorted(maps.Keys(m.sources)) {
		if !m.rpm[path] {
			p.ConfigSources = append(p.ConfigSources, plan.ConfigSetting{Path: path, Value: m.leaf(path), Source: m.sources[path]})
		}
	}
	return nil
}

// DropInPath is the config drop-in a plan writes on releases that read
// config.d (the release knowledge says which; older ones get config.yaml).
// MicroShift reads config.d/*.yaml in lexical order after config.yaml, so
// the RPMs' own drop-ins (00-) come before it and a user's later ones (20-)
// still win.
const DropInPath = "/etc/microshift/config.d/10-microshift-compose.yaml"

// selectsPackage reports whether a selected component installs pkg.
func (r *resolver) selectsPackage(pkg string) bool {
	for _, n := range r.order {
		if slices.Contains(r.cat.Components[n].Packages, pkg) {
			return true
		}
	}
	return false
}

// checkNeeds refuses a config value that only works with a component the
// plan leaves out (network.multus.status: Enabled without Multus), and one
// that turns off a component the plan selects (network.cniPlugin: none
// with OVN-K).
func (r *resolver) checkNeeds(m *configMerger) error {
	for _, path := range slices.Sorted(maps.Keys(m.sources)) {
		key := r.facts.Config.Key(path)
		if key == nil {
			continue
		}
		where := m.sources[path]
		if where == m.userLabel {
			where = m.userPath
		}
		for _, v := range leafStrings(m.leaf(path)) {
			if comp, needs := key.Needs[v]; needs {
				if _, selected := r.reasons[comp]; !selected {
					return fmt.Errorf("%s: %s: %q needs component %s, which the plan leaves out; add --with %s or drop the setting", where, path, v, comp, comp)
				}
			}
			if comp, off := key.Off[v]; off {
				if _, selected := r.reasons[comp]; selected {
					return fmt.Errorf("%s: %s: %q turns off %s, which the plan selects (%s: %s); drop the setting or leave it out with --without %s",
						where, path, v, comp, comp, r.why(comp), comp)
				}
			}
		}
	}
	return nil
}

// leafStrings returns a string leaf, or the strings of a list leaf.
func leafStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

type configMerger struct {
	tree    map[string]any
	sources map[string]string // leaf path -> source
	rpm     map[string]bool   // leaf paths an RPM's own drop-in sets

	userPath, userLabel string
}

func (m *configMerger) merge(prefix string, src map[string]any, source string) error {
	for _, k := range slices.Sorted(maps.Keys(src)) {
		path := strings.TrimPrefix(prefix+"."+k, ".")
		if sub, ok := src[k].(map[string]any); ok {
			if err := m.merge(path, sub, source); err != nil {
				return err
			}
			continue
		}
		if err := m.set(path, src[k], source); err != nil {
			return err
		}
	}
	return nil
}

func (m *configMerger) set(path string, v any, source string) error {
	parts := strings.Split(path, ".")
	cur := m.tree
	for i, part := range parts[:len(parts)-1] {
		next, exists := cur[part]
		if !exists {
			child := map[string]any{}
			cur[part] = child
			cur = child
			continue
		}
		child, ok := next.(map[string]any)
		if !ok {
			at := strings.Join(parts[:i+1], ".")
			// source wants a mapping at "at", where a value already is.
			return m.conflict(at, next, m.sources[at], map[string]any{}, source)
		}
		cur = child
	}
	last := parts[len(parts)-1]
	if old, exists := cur[last]; exists {
		if _, isMap := old.(map[string]any); isMap || !reflect.DeepEqual(old, v) {
			return m.conflict(path, old, m.sources[path], v, source)
		}
		return nil // same value from a second source: keep the first
	}
	cur[last] = v
	m.sources[path] = source
	return nil
}

func (m *configMerger) conflict(path string, old any, oldSource string, v any, source string) error {
	if _, isMap := old.(map[string]any); isMap {
		// A mapping has no source of its own: name those of its leaves.
		var under []string
		for _, p := range slices.Sorted(maps.Keys(m.sources)) {
			if strings.HasPrefix(p, path+".") && !slices.Contains(under, m.sources[p]) {
				under = append(under, m.sources[p])
			}
		}
		oldSource = strings.Join(under, ", ")
	}
	if source == m.userLabel && m.userLabel != "" {
		return fmt.Errorf("%s: %s is %s but the plan needs %s (set by %s); remove it from the file or change the selection",
			m.userPath, path, show(v), show(old), oldSource)
	}
	return fmt.Errorf("config conflict at %s: %s sets %s, %s sets %s", path, oldSource, show(old), source, show(v))
}

// without returns a copy of the tree without the leaves at paths, and
// without the mappings that leaves empty.
func (m *configMerger) without(paths map[string]bool) map[string]any {
	var copyTree func(prefix string, t map[string]any) map[string]any
	copyTree = func(prefix string, t map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range t {
			p := strings.TrimPrefix(prefix+"."+k, ".")
			if sub, ok := v.(map[string]any); ok {
				if c := copyTree(p, sub); len(c) > 0 {
					out[k] = c
				}
				continue
			}
			if !paths[p] {
				out[k] = v
			}
		}
		return out
	}
	return copyTree("", m.tree)
}

func (m *configMerger) leaf(path string) any {
	var cur any = m.tree
	for _, part := range strings.Split(path, ".") {
		cur = cur.(map[string]any)[part]
	}
	return cur
}

// summarize lists up to max items and says how many more there are.
func summarize(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:max], ", "), len(items)-max)
}

// show formats a config value for messages: "none", ["snapshot-controller"].
func show(v any) string {
	if _, ok := v.(map[string]any); ok {
		return "a mapping"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// renderConfig writes the config tree as YAML with a header saying where it
// came from. sigs.k8s.io/yaml sorts keys, so the bytes are stable.
func renderConfig(p *plan.Plan) ([]byte, error) {
	body, err := yaml.Marshal(p.Config)
	if err != nil {
		return nil, fmt.Errorf("rendering MicroShift config: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# MicroShift config for profile %q, release %s, %s.\n", p.Profile, p.Release.Stream, p.Arch)
	b.WriteString("# Generated by microshift-compose from the plan; do not edit. Sources:\n")
	width := 0
	for _, s := range p.ConfigSources {
		width = max(width, len(s.Path))
	}
	srcs := append([]plan.ConfigSetting(nil), p.ConfigSources...)
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].Path < srcs[j].Path })
	for _, s := range srcs {
		fmt.Fprintf(&b, "#   %-*s  %s\n", width, safetext.Comment(s.Path), safetext.Comment(s.Source))
	}
	b.Write(body)
	return b.Bytes(), nil
}
