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

	"github.com/microshift-compose/microshift-compose/compose/plan"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// DropInPath is where the plan's MicroShift config lands on the device.
// MicroShift reads config.d/*.yaml in lexical order after config.yaml, so a
// user's own later drop-ins (20-*.yaml) still win.
const DropInPath = "/etc/microshift/config.d/10-microshift-compose.yaml"

// addConfig merges, in apply order, the config of every selected component,
// the "left out" config of every available component that is not selected,
// and the user's config.yaml. Two sources setting one key to different
// values is an error naming both.
func (r *resolver) addConfig(p *plan.Plan) error {
	m := &configMerger{tree: map[string]any{}, sources: map[string]string{}}
	for _, n := range r.cat.ComponentNames() {
		c := r.cat.Components[n]
		if _, selected := r.reasons[n]; selected {
			if err := m.merge("", c.Config.Selected, n); err != nil {
				return err
			}
			continue
		}
		if c.SupportsArch(r.req.Arch) && c.SupportsRelease(r.rel) {
			if err := m.merge("", c.Config.Omitted, n+" left out"); err != nil {
				return err
			}
		}
	}
	if cfg := r.req.Config; cfg != nil {
		// The label is the base name so that the plan does not depend on
		// where the file sits; errors name the full path.
		m.userPath, m.userLabel = cfg.Source, "user "+filepath.Base(cfg.Source)
		// Values equal to MicroShift's defaults change nothing: they stay
		// out of the drop-in (and cannot conflict with the plan).
		if err := m.merge("", cfg.Changes, m.userLabel); err != nil {
			return err
		}
		if n := len(cfg.Defaulted); n > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: %d %s MicroShift's defaults and %s left out of the drop-in (%s)",
				m.userLabel, n, text.Plural(n, "value equals", "values equal"), text.Plural(n, "is", "are"), summarize(cfg.Defaulted, 4)))
		}
	}
	p.Config = m.tree
	for _, path := range slices.Sorted(maps.Keys(m.sources)) {
		p.ConfigSources = append(p.ConfigSources, plan.ConfigSetting{Path: path, Value: m.leaf(path), Source: m.sources[path]})
	}
	return nil
}

type configMerger struct {
	tree    map[string]any
	sources map[string]string // leaf path -> source

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

// renderDropIn writes the config tree as YAML with a header saying where it
// came from. sigs.k8s.io/yaml sorts keys, so the bytes are stable.
func renderDropIn(p *plan.Plan) ([]byte, error) {
	body, err := yaml.Marshal(p.Config)
	if err != nil {
		return nil, fmt.Errorf("rendering config drop-in: %w", err)
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
		fmt.Fprintf(&b, "#   %-*s  %s\n", width, s.Path, s.Source)
	}
	b.Write(body)
	return b.Bytes(), nil
}
