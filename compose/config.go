package compose

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// DropInPath is the config drop-in a plan writes on releases that read
// config.d (the release knowledge says which; older ones get config.yaml).
// MicroShift reads config.d/*.yaml in lexical order after config.yaml, so
// the RPMs' own drop-ins (00-) come before it and a user's later ones (20-)
// still win.
const DropInPath = "/etc/microshift/config.d/10-microshift-compose.yaml"

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
			m.userPath, path, text.ConfigValue(v), text.ConfigValue(old), oldSource)
	}
	return fmt.Errorf("config conflict at %s: %s sets %s, %s sets %s", path, oldSource, text.ConfigValue(old), source, text.ConfigValue(v))
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
