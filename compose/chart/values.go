package chart

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart"
	"sigs.k8s.io/yaml"
)

// This file computes a chart's values the way `helm install` does, so
// that a chart renders the same objects here as there: the values file
// over the chart's defaults, maps merged and everything else replaced, a
// null deleting the default under it, each subchart's defaults under its
// name, the parent's global table copied into every subchart, and the
// dependencies of Chart.yaml that conditions, tags or aliases change.
// TestValuesMatchHelm checks each rule against the pinned `helm template`.

// globalKey is the table of values every subchart sees too.
const globalKey = "global"

// Values are values as templates see them: .Values, and the data of a
// template (.Values, .Chart, .Release...). Tables inside are plain maps,
// as YAML decodes them.
type Values map[string]any

// YAML is the values as YAML (a template may call .Values.YAML).
func (v Values) YAML() (string, error) {
	b, err := yaml.Marshal(v)
	return string(b), err
}

// AsMap is the values as a plain map, never nil.
func (v Values) AsMap() map[string]any {
	if len(v) == 0 {
		return map[string]any{}
	}
	return v
}

// noTable is a path with no table at it.
type noTable struct{ key string }

func (e noTable) Error() string { return fmt.Sprintf("%q is not a table", e.key) }

// noValue is a path with no value (or a table) at it.
type noValue struct{ key string }

func (e noValue) Error() string { return fmt.Sprintf("%q is not a value", e.key) }

// Table is the table at a dotted path ("a.b": table b in table a).
func (v Values) Table(dotted string) (Values, error) {
	t := v
	for _, key := range strings.Split(dotted, ".") {
		next, ok := t[key]
		if !ok {
			return t, noTable{key}
		}
		switch m := next.(type) {
		case map[string]any:
			t = m
		case Values:
			t = m
		default:
			return Values{}, noTable{key}
		}
	}
	return t, nil
}

// PathValue is the value, not a table, at a dotted path.
func (v Values) PathValue(dotted string) (any, error) {
	if dotted == "" {
		return nil, fmt.Errorf("YAML path cannot be empty")
	}
	parent, key := "", dotted
	if i := strings.LastIndex(dotted, "."); i >= 0 {
		parent, key = dotted[:i], dotted[i+1:]
	}
	t := v
	if parent != "" {
		var err error
		if t, err = v.Table(parent); err != nil {
			return nil, noValue{key}
		}
	}
	if val, ok := t[key]; ok && !isTable(val) {
		return val, nil
	}
	return nil, noValue{key}
}

func isTable(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// readValues decodes a values file; an empty one is an empty table.
func readValues(data []byte) (Values, error) {
	var v Values
	err := yaml.Unmarshal(data, &v)
	if len(v) == 0 {
		v = Values{}
	}
	return v, err
}

// deepCopy copies the maps and lists of a value, so that coalescing and
// templates (set, unset) change no value they were given.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = deepCopy(e)
		}
		return out
	case Values:
		if v == nil {
			return v
		}
		return Values(deepCopy(map[string]any(v)).(map[string]any))
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

func copyTable(m map[string]any) map[string]any {
	c, _ := deepCopy(m).(map[string]any)
	if c == nil {
		c = map[string]any{}
	}
	return c
}

// coalesceValues is what a chart renders with: vals over the chart's
// defaults and its subcharts', nulls deleting what they override.
func coalesceValues(ch *chart.Chart, vals map[string]any) (Values, error) {
	v, err := coalesce(ch, copyTable(vals), false)
	return v, err
}

// mergeValues is coalesceValues keeping nulls (for import-values).
func mergeValues(ch *chart.Chart, vals map[string]any) (Values, error) {
	v, err := coalesce(ch, copyTable(vals), true)
	return v, err
}

// coalesce puts the chart's defaults under dest, then each subchart's
// under dest[subchart] with the globals. keepNull keeps a null that
// overrides a default, where coalescing deletes both.
func coalesce(ch *chart.Chart, dest map[string]any, keepNull bool) (map[string]any, error) {
	underDefaults(ch, dest, keepNull)
	for _, sub := range ch.Dependencies() {
		name := sub.Name()
		v, ok := dest[name]
		if !ok {
			v = map[string]any{}
			dest[name] = v
		}
		table, ok := v.(map[string]any)
		if !ok {
			return dest, fmt.Errorf("type mismatch on %s: %t", name, v)
		}
		copyGlobals(table, dest)
		out, err := coalesce(sub, table, keepNull)
		dest[name] = out
		if err != nil {
			return dest, err
		}
	}
	return dest, nil
}

// underDefaults puts a copy of the chart's default values under v: a key
// v lacks takes the default, a table merges with a default table (a
// subchart's table keeping its nulls), a null deletes the key unless
// keepNull.
func underDefaults(ch *chart.Chart, v map[string]any, keepNull bool) {
	defaults, _ := deepCopy(ch.Values).(map[string]any)
	for key, def := range defaults {
		val, ok := v[key]
		switch {
		case !ok:
			v[key] = def
		case val == nil:
			if !keepNull {
				delete(v, key)
			}
		case isTable(val) && isTable(def):
			mergeTables(val.(map[string]any), def.(map[string]any), keepNull || isSubchart(ch, key))
		}
	}
}

func isSubchart(ch *chart.Chart, name string) bool {
	for _, sub := range ch.Dependencies() {
		if sub.Name() == name {
			return true
		}
	}
	return false
}

// mergeTables puts src under dst: dst's values win, tables merge, a null
// in dst deletes the key unless keepNull. It returns dst (src when dst is
// nil).
func mergeTables(dst, src map[string]any, keepNull bool) map[string]any {
	if src == nil {
		return dst
	}
	if dst == nil {
		return src
	}
	for key, s := range src {
		d, ok := dst[key]
		switch {
		case !ok:
			dst[key] = s
		case d == nil:
			if !keepNull {
				delete(dst, key)
			}
		case isTable(s) && isTable(d):
			mergeTables(d.(map[string]any), s.(map[string]any), keepNull)
		}
	}
	return dst
}

// copyGlobals gives a subchart's values the parent's globals: the
// subchart's own global table (a new one when it has none) takes every
// global of the parent, tables merged with the parent's winning. A global
// that is not a table on either side is left alone.
func copyGlobals(sub, parent map[string]any) {
	dg := map[string]any{}
	if g, ok := sub[globalKey]; ok {
		if dg, ok = g.(map[string]any); !ok {
			return
		}
	}
	sg := map[string]any{}
	if g, ok := parent[globalKey]; ok {
		if sg, ok = g.(map[string]any); !ok {
			return
		}
	}
	for key, val := range sg {
		d, exists := dg[key]
		if table, ok := val.(map[string]any); ok {
			shallow := make(map[string]any, len(table))
			for k, e := range table {
				shallow[k] = e
			}
			switch {
			case !exists:
				dg[key] = shallow
			case isTable(d):
				mergeTables(shallow, d.(map[string]any), true)
				dg[key] = shallow
			}
			continue
		}
		if !exists || !isTable(d) {
			dg[key] = val
		}
	}
	sub[globalKey] = dg
}

// compatible says whether version meets constraint (false when either
// does not parse).
func compatible(constraint, version string) bool {
	v, err := semver.NewVersion(version)
	if err != nil {
		return false
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return false
	}
	return c.Check(v)
}

// processDependencies applies Chart.yaml's dependencies to the chart, as
// helm install does before it renders: an alias renames a subchart (a
// copy of it), a condition or tags that the values turn off remove it,
// and import-values copy subchart values into the parent's defaults.
func processDependencies(ch *chart.Chart, vals Values) error {
	if err := enableDependencies(ch, vals, ""); err != nil {
		return err
	}
	return importValues(ch)
}

// enableDependencies keeps the subcharts that Chart.yaml's dependencies
// (aliases, conditions, tags) and the values enable; path is where the
// chart's values are in the top chart's ("sub." for a subchart).
func enableDependencies(ch *chart.Chart, vals map[string]any, path string) error {
	md := ch.Metadata
	if md.Dependencies == nil {
		return nil
	}
	var subs []*chart.Chart
	// Subcharts that no dependency names are kept as they are.
	for _, sub := range ch.Dependencies() {
		named := false
		for _, d := range md.Dependencies {
			if d != nil && sub.Name() == d.Name && compatible(d.Version, sub.Metadata.Version) {
				named = true
				break
			}
		}
		if !named {
			subs = append(subs, sub)
		}
	}
	for _, d := range md.Dependencies {
		if d == nil {
			continue
		}
		if sub := aliased(ch.Dependencies(), d); sub != nil {
			subs = append(subs, sub)
		}
		if d.Alias != "" {
			d.Name = d.Alias
		}
	}
	ch.SetDependencies(subs...)
	for _, d := range md.Dependencies {
		if d != nil {
			d.Enabled = true
		}
	}
	cvals, err := coalesceValues(ch, vals)
	if err != nil {
		return err
	}
	applyTags(md.Dependencies, cvals)
	applyConditions(md.Dependencies, cvals, path)
	off := map[string]bool{}
	for _, d := range md.Dependencies {
		if d != nil && !d.Enabled {
			off[d.Name] = true
		}
	}
	var kept []*chart.Chart
	for _, sub := range ch.Dependencies() {
		if !off[sub.Metadata.Name] {
			kept = append(kept, sub)
		}
	}
	var keptDeps []*chart.Dependency
	for _, d := range md.Dependencies {
		if d == nil || !off[d.Name] {
			keptDeps = append(keptDeps, d)
		}
	}
	for _, sub := range kept {
		if err := enableDependencies(sub, cvals, path+sub.Metadata.Name+"."); err != nil {
			return err
		}
	}
	md.Dependencies = keptDeps
	ch.SetDependencies(kept...)
	return nil
}

// aliased is the first subchart a dependency names in a version it
// accepts: a copy renamed to the dependency's alias when it has one.
func aliased(subs []*chart.Chart, d *chart.Dependency) *chart.Chart {
	for _, sub := range subs {
		if sub == nil || sub.Name() != d.Name || !compatible(d.Version, sub.Metadata.Version) {
			continue
		}
		c := *sub
		md := *sub.Metadata
		c.Metadata = &md
		if d.Alias != "" {
			md.Name = d.Alias
		}
		return &c
	}
	return nil
}

// applyTags turns a dependency off when its tags are set in the values'
// tags table, none true and one false.
func applyTags(deps []*chart.Dependency, vals Values) {
	tags, err := vals.Table("tags")
	if err != nil {
		return
	}
	for _, d := range deps {
		if d == nil {
			continue
		}
		anyTrue, anyFalse := false, false
		for _, tag := range d.Tags {
			if b, ok := tags[tag].(bool); ok {
				anyTrue = anyTrue || b
				anyFalse = anyFalse || !b
			}
		}
		d.Enabled = anyTrue || !anyFalse
	}
}

// applyConditions sets a dependency on or off by the first of its
// conditions (comma-separated value paths) that names a boolean.
func applyConditions(deps []*chart.Dependency, vals Values, path string) {
	for _, d := range deps {
		if d == nil {
			continue
		}
		for _, cond := range strings.Split(strings.TrimSpace(d.Condition), ",") {
			if cond == "" {
				continue
			}
			v, err := vals.PathValue(path + cond)
			if b, ok := v.(bool); err == nil && ok {
				d.Enabled = b
				break
			}
		}
	}
}

// importValues copies the values that dependencies' import-values name
// from each subchart (deepest first) into its parent's defaults, under
// the parent's own values, and rewrites import-values in the long form.
func importValues(ch *chart.Chart) error {
	for _, sub := range ch.Dependencies() {
		if err := importValues(sub); err != nil {
			return err
		}
	}
	md := ch.Metadata
	if md.Dependencies == nil {
		return nil
	}
	cvals, err := mergeValues(ch, nil)
	if err != nil {
		return err
	}
	imported := map[string]any{}
	for _, d := range md.Dependencies {
		if d == nil {
			continue
		}
		var long []any
		for _, iv := range d.ImportValues {
			var child, parent string
			switch iv := iv.(type) {
			case map[string]any:
				child, parent = fmt.Sprintf("%v", iv["child"]), fmt.Sprintf("%v", iv["parent"])
			case string:
				child, parent = "exports."+iv, "."
			default:
				continue
			}
			long = append(long, map[string]string{"child": child, "parent": parent})
			t, err := cvals.Table(d.Name + "." + child)
			if err != nil {
				continue
			}
			imported = mergeTables(imported, nestUnder(parent, t.AsMap()), true)
		}
		d.ImportValues = long
	}
	ch.Values = mergeTables(copyTable(cvals), imported, true)
	return nil
}

// nestUnder puts data at a dotted path ("." is the top).
func nestUnder(dotted string, data map[string]any) map[string]any {
	if dotted == "." {
		return data
	}
	keys := strings.Split(dotted, ".")
	for i := len(keys) - 1; i >= 0; i-- {
		data = map[string]any{keys[i]: data}
	}
	return data
}
