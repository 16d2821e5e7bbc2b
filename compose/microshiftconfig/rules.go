package microshiftconfig

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// Settings are a config checked against one release: what of it changes
// anything on the device.
type Settings struct {
	// Changes are the values that differ from MicroShift's defaults, as a
	// tree: what a plan writes.
	Changes map[string]any
	// Defaulted lists, sorted, the dotted paths left out of Changes: unset
	// (null), zero values MicroShift reads as unset, and values equal to
	// its defaults.
	Defaulted []string
	// DeviceChecked are the notes of keys set whose rules MicroShift
	// checks against the device itself (interfaces, files), sorted.
	DeviceChecked []string
}

// For checks the config against the rules of one release and returns what
// of it matters there.
func (c *Config) For(rules *knowledge.Rules) (*Settings, error) {
	if err := Check(rules, c.Tree); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Source, err)
	}
	s := &Settings{Changes: map[string]any{}}
	pruneTree(rules, "", c.Tree, s.Changes, &s.Defaulted)
	sort.Strings(s.Defaulted)
	notes := map[string]bool{}
	walkSet(rules, "", s.Changes, func(k *knowledge.Key) {
		if k.Note != "" {
			notes[k.Path+": "+k.Note] = true
		}
	})
	s.DeviceChecked = slices.Sorted(maps.Keys(notes))
	return s, nil
}

// Check validates a config tree against the release's rules: every key
// must be one the release has, with a value of the right type and one the
// release accepts, and the rules that span keys must hold. The error names
// the field path and the release.
func Check(rules *knowledge.Rules, tree map[string]any) error {
	v := &validator{rules: rules, release: fmt.Sprintf("MicroShift %d.%d", rules.Version.Major(), rules.Version.Minor())}
	if err := v.table("", tree); err != nil {
		return err
	}
	return v.crossChecks(tree)
}

type validator struct {
	rules   *knowledge.Rules
	release string
}

// join makes a dotted path.
func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// table checks a mapping at schema path prefix; display paths carry list
// indices, schema paths "[]".
func (v *validator) table(prefix string, m map[string]any) error {
	return v.tableAt(prefix, prefix, m)
}

func (v *validator) tableAt(schemaPrefix, displayPrefix string, m map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		sp, dp := join(schemaPrefix, k), join(displayPrefix, k)
		val := m[k]
		if key := v.rules.Key(sp); key != nil {
			if err := v.value(key, dp, val); err != nil {
				return err
			}
			continue
		}
		if v.rules.HasPrefix(sp) {
			if val == nil {
				continue
			}
			sub, ok := val.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: must be a mapping, got %s", dp, kind(val))
			}
			if err := v.tableAt(sp, dp, sub); err != nil {
				return err
			}
			continue
		}
		return v.unknown(schemaPrefix, displayPrefix, k)
	}
	return nil
}

// unknown explains a key the release does not have: a typo, or a setting
// of other releases.
func (v *validator) unknown(schemaPrefix, displayPrefix, k string) error {
	sp, dp := join(schemaPrefix, k), join(displayPrefix, k)
	if other := v.rules.Elsewhere(sp); other != "" {
		return fmt.Errorf("%s: %s has no such setting (it exists %s)", dp, v.release, other)
	}
	var siblings []string
	for _, p := range v.rules.Paths() {
		rest := p
		if schemaPrefix != "" {
			r, ok := strings.CutPrefix(p, schemaPrefix+".")
			if !ok {
				continue
			}
			rest = r
		}
		name := strings.SplitN(strings.SplitN(rest, ".", 2)[0], "[]", 2)[0]
		if !slices.Contains(siblings, name) {
			siblings = append(siblings, name)
		}
	}
	what, loc := "section", ""
	if displayPrefix != "" {
		what, loc = "key", displayPrefix+": "
	}
	if m := suggest.Closest(k, siblings); m != "" {
		return fmt.Errorf("%sunknown %s %q; did you mean %q?", loc, what, k, m)
	}
	return fmt.Errorf("%sunknown %s %q (%s has %s)", loc, what, k, v.release, strings.Join(siblings, ", "))
}

// value checks one setting's value against its key.
func (v *validator) value(key *knowledge.Key, path string, val any) error {
	if val == nil {
		return nil // null is unset
	}
	switch key.Type {
	case knowledge.TypeString:
		s, ok := val.(string)
		if !ok {
			return fmt.Errorf("%s: must be a string, got %s", path, kind(val))
		}
		return v.scalar(key, path, s)
	case knowledge.TypeBool:
		if _, ok := val.(bool); !ok {
			return fmt.Errorf("%s: must be true or false, got %s", path, kind(val))
		}
	case knowledge.TypeInt, knowledge.TypeUint:
		n, ok := val.(int64)
		if !ok {
			return fmt.Errorf("%s: must be an integer, got %s", path, kind(val))
		}
		if key.Type == knowledge.TypeUint && n < 0 {
			return fmt.Errorf("%s: must not be negative, got %d", path, n)
		}
		if !key.AllowsValue(n) {
			return fmt.Errorf("%s: %d is not one of %s (%s)", path, n, key.ValueList(), v.release)
		}
		if n == 0 && key.Zero != knowledge.ZeroApplies {
			return nil
		}
		if key.Min != nil && n < *key.Min {
			return fmt.Errorf("%s: %d is below the minimum %d%s", path, n, *key.Min, zeroHint(key))
		}
		if key.Max != nil && n > *key.Max {
			return fmt.Errorf("%s: %d is above the maximum %d", path, n, *key.Max)
		}
	case knowledge.TypeDuration:
		s, ok := val.(string)
		if !ok {
			return fmt.Errorf("%s: must be a duration such as \"30s\", got %s", path, kind(val))
		}
		if s == "" {
			return nil
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%s: %q is not a duration such as \"30s\"", path, s)
		}
		if key.MinDuration != "" {
			if floor, err := time.ParseDuration(key.MinDuration); err == nil && d > 0 && d < floor {
				return fmt.Errorf("%s: %s is below the minimum %s (MicroShift ignores it)", path, s, key.MinDuration)
			}
		}
		if d < 0 {
			return fmt.Errorf("%s: %s must not be negative", path, s)
		}
	case knowledge.TypeList:
		list, ok := val.([]any)
		if !ok {
			return fmt.Errorf("%s: must be a list, got %s", path, kind(val))
		}
		if key.MaxItems > 0 && len(list) > key.MaxItems {
			return fmt.Errorf("%s: at most %d entries, got %d", path, key.MaxItems, len(list))
		}
		for i, e := range list {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("%s[%d]: must be a string, got %s", path, i, kind(e))
			}
			if err := v.scalar(key, fmt.Sprintf("%s[%d]", path, i), s); err != nil {
				return err
			}
		}
	case knowledge.TypeObjects:
		list, ok := val.([]any)
		if !ok {
			return fmt.Errorf("%s: must be a list, got %s", path, kind(val))
		}
		if key.MaxItems > 0 && len(list) > key.MaxItems {
			return fmt.Errorf("%s: at most %d entries, got %d", path, key.MaxItems, len(list))
		}
		for i, e := range list {
			dp := fmt.Sprintf("%s[%d]", path, i)
			if e == nil {
				continue
			}
			m, ok := e.(map[string]any)
			if !ok {
				return fmt.Errorf("%s: must be a mapping, got %s", dp, kind(e))
			}
			if err := v.tableAt(key.Path+"[]", dp, m); err != nil {
				return err
			}
		}
	case knowledge.TypeMap:
		m, ok := val.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: must be a mapping, got %s", path, kind(val))
		}
		if key.Items == knowledge.TypeString {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if _, ok := m[k].(string); !ok && m[k] != nil {
					return fmt.Errorf("%s.%s: must be a string, got %s", path, k, kind(m[k]))
				}
			}
		}
	case knowledge.TypeObject:
		m, ok := val.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: must be a mapping, got %s", path, kind(val))
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			return fmt.Errorf("%s: unknown key %q (%s takes an empty mapping)", path, k, path)
		}
	}
	return nil
}

func zeroHint(key *knowledge.Key) string {
	if key.Zero == knowledge.ZeroDefault {
		return " (or 0 for MicroShift's default)"
	}
	return ""
}

// scalar checks a string value (or a list item) against values and format.
func (v *validator) scalar(key *knowledge.Key, path, s string) error {
	if len(key.Values) > 0 && !key.AllowsValue(s) {
		return fmt.Errorf("%s: %q is not one of %s (%s)", path, s, key.ValueList(), v.release)
	}
	if s == "" || key.Format == "" {
		return nil
	}
	if err := checkFormat(key.Format, s); err != nil {
		return fmt.Errorf("%s: %q %v", path, s, err)
	}
	return nil
}

// walkSet calls fn for the key of every non-null value set in tree.
func walkSet(rules *knowledge.Rules, prefix string, tree map[string]any, fn func(*knowledge.Key)) {
	for _, k := range slices.Sorted(maps.Keys(tree)) {
		p := join(prefix, k)
		val := tree[k]
		if val == nil {
			continue
		}
		if key := rules.Key(p); key != nil {
			fn(key)
			if key.Type == knowledge.TypeObjects {
				if list, ok := val.([]any); ok {
					for _, e := range list {
						if m, ok := e.(map[string]any); ok {
							walkSet(rules, p+"[]", m, fn)
						}
					}
				}
			}
			continue
		}
		if sub, ok := val.(map[string]any); ok {
			walkSet(rules, p, sub, fn)
		}
	}
}

// pruneTree copies into out the values of tree that change something on a
// device of the release, recording the dotted paths of those it leaves out.
// The tree must have passed Check.
func pruneTree(rules *knowledge.Rules, prefix string, tree, out map[string]any, dropped *[]string) {
	for _, k := range slices.Sorted(maps.Keys(tree)) {
		p := join(prefix, k)
		val := tree[k]
		key := rules.Key(p)
		if val == nil {
			*dropped = append(*dropped, p)
			continue
		}
		if key == nil {
			sub := val.(map[string]any)
			pruned := map[string]any{}
			pruneTree(rules, p, sub, pruned, dropped)
			if len(pruned) > 0 {
				out[k] = pruned
			} else if len(sub) == 0 {
				*dropped = append(*dropped, p)
			}
			continue
		}
		kept, ok := pruneValue(rules, key, val)
		if !ok {
			*dropped = append(*dropped, p)
			continue
		}
		out[k] = kept
	}
}

// pruneValue returns the value of a key as it matters, and false when it
// changes nothing: a zero value MicroShift reads as unset, a list whose
// items are all empty, or MicroShift's default. Lists of tables are
// compared with the default after both are pruned the same way.
func pruneValue(rules *knowledge.Rules, key *knowledge.Key, val any) (any, bool) {
	kept, ok := pruneZero(rules, key, val)
	if !ok {
		return nil, false
	}
	if key.Default != nil {
		def, _ := pruneZero(rules, key, normalizeTOML(key.Default))
		if equalValue(def, kept) {
			return nil, false
		}
	}
	return kept, true
}

func pruneZero(rules *knowledge.Rules, key *knowledge.Key, val any) (any, bool) {
	applies := key.Zero == knowledge.ZeroApplies
	switch x := val.(type) {
	case string:
		return x, x != "" || applies
	case bool:
		return x, x || applies
	case int64:
		return x, x != 0 || applies
	case map[string]any:
		return x, len(x) > 0 || applies
	case []any:
		if key.Type == knowledge.TypeObjects {
			elems := []any{}
			for _, e := range x {
				m, ok := e.(map[string]any)
				if !ok {
					continue
				}
				pruned := map[string]any{}
				var ignored []string
				pruneTree(rules, key.Path+"[]", m, pruned, &ignored)
				if len(pruned) > 0 {
					elems = append(elems, pruned)
				}
			}
			return elems, len(elems) > 0 || applies
		}
		empty := true
		for _, e := range x {
			if s, ok := e.(string); !ok || s != "" {
				empty = false
			}
		}
		if empty && !(applies && len(x) == 0) {
			return nil, false
		}
		return x, true
	}
	return val, true
}

// normalizeTOML makes a default from config.toml comparable with a value
// decoded from YAML (TOML arrays decode as []any already; tables as maps).
func normalizeTOML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeTOML(e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeTOML(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeTOML(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case int:
		return int64(x)
	}
	return v
}

func equalValue(a, b any) bool { return reflect.DeepEqual(a, b) }
