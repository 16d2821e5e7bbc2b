package chart

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"
)

// maxHookProbes bounds how many of the chart's values hookError tries
// turning off, each a rendering of the chart.
const maxHookProbes = 24

// hookError refuses the chart's hooks, saying for each the value of the
// chart that leaves it out when there is one: found by rendering the
// chart again with each true boolean of its values set to false (the most
// likely first: those whose words the hook's template or name shares) and
// seeing which hook is gone.
func hookError(ctx context.Context, l *Loaded, o Options, hooks []*hook) error {
	switches := hookSwitches(ctx, l, o, hooks)
	valuesFile := "the values file ([chart] values)"
	if l.Values != "" {
		valuesFile = l.Values
	}
	var parts []string
	for _, h := range hooks {
		part := fmt.Sprintf("%s %s (%s, %s)", h.kind, h.name, h.file, strings.Join(h.events, ","))
		if sw, ok := switches[h.key()]; ok {
			part += fmt.Sprintf(": set %s: false in %s to leave it out", sw, valuesFile)
		} else {
			part += ": no value of the chart leaves it out"
		}
		parts = append(parts, part)
	}
	return fmt.Errorf("chart hooks have no meaning for MicroShift's manifest loader, which applies the manifests once with no install or upgrade event: %s", strings.Join(parts, "; "))
}

// hookSwitches maps each hook to a value path whose false leaves it out.
func hookSwitches(ctx context.Context, l *Loaded, o Options, hooks []*hook) map[string]string {
	out := map[string]string{}
	// The probes together get what one rendering may take, at most.
	ctx, cancel := context.WithTimeout(ctx, min(o.Limits.Timeout, 10*time.Second))
	defer cancel()
	ch, err := l.load()
	if err != nil {
		return out
	}
	vals := Values{}
	if l.values != nil {
		if vals, err = readValues(l.values); err != nil {
			return out
		}
	}
	if err := processDependencies(ch, vals); err != nil {
		return out
	}
	merged, err := coalesceValues(ch, vals)
	if err != nil {
		return out
	}
	var candidates []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if strings.Contains(k, ".") {
				continue // a path could not name it
			}
			switch v := m[k].(type) {
			case bool:
				if v {
					candidates = append(candidates, prefix+k)
				}
			case map[string]any:
				walk(prefix+k+".", v)
			case Values:
				walk(prefix+k+".", v)
			}
		}
	}
	walk("", merged)
	words := hookWords(hooks)
	score := func(p string) int {
		n := 0
		for _, seg := range strings.Split(strings.ToLower(p), ".") {
			for _, w := range words {
				if strings.Contains(seg, w) {
					n++
				}
			}
		}
		return n
	}
	slices.SortStableFunc(candidates, func(a, b string) int { return score(b) - score(a) })
	if len(candidates) > maxHookProbes {
		candidates = candidates[:maxHookProbes]
	}
	for _, c := range candidates {
		if len(out) == len(hooks) || ctx.Err() != nil {
			break
		}
		_, rendered, _, err := renderTemplates(ctx, l, o, func(v Values) { setFalse(v, strings.Split(c, ".")) }, nil)
		if err != nil {
			continue
		}
		left, _, err := sortRendered(rendered)
		if err != nil {
			continue
		}
		for _, h := range hooks {
			k := h.key()
			if _, found := out[k]; found {
				continue
			}
			if !slices.ContainsFunc(left, func(x *hook) bool { return x.key() == k }) {
				out[k] = c
			}
		}
	}
	return out
}

// hookWords are the words of the hooks' templates, names and kinds, for
// ranking the values that may turn them off.
func hookWords(hooks []*hook) []string {
	seen := map[string]bool{"hook": true, "hooks": true}
	for _, h := range hooks {
		base := strings.TrimSuffix(path.Base(h.file), path.Ext(h.file))
		for _, w := range strings.FieldsFunc(strings.ToLower(base+"-"+h.name+"-"+h.kind), func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
			if len(w) >= 3 {
				seen[w] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// setFalse sets the value at path to false, copying the maps on the way so
// that the values read from the file stay as they are.
func setFalse(v map[string]any, path []string) {
	for i, k := range path {
		if i == len(path)-1 {
			v[k] = false
			return
		}
		next, _ := v[k].(map[string]any)
		cp := map[string]any{}
		for kk, vv := range next {
			cp[kk] = vv
		}
		v[k] = cp
		v = cp
	}
}
