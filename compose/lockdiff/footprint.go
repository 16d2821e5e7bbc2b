package lockdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// Footprint is the optional footprint section of a lock (written by
// `build --resolve-sizes`): bytes per component and in total, for the
// plan's arch. The shape read is
//
//	"footprint": {
//	  "arch": "x86_64",
//	  "components": [{"name": "core", "compressed_bytes": 123, "unique_bytes": 100}, ...],
//	  "total": {"compressed_bytes": 456, "unique_bytes": 400}
//	}
//
// and, to stay compatible while that section settles, "components" may also
// be an object keyed by component name, "component" may stand for "name",
// and the sizes may be spelled compressed/compressedBytes and
// unique/uniqueBytes. Compressed bytes count every image's layers; unique
// bytes count shared layers once.
type Footprint struct {
	Total      *Sizes           `json:"total,omitempty"`
	Components map[string]Sizes `json:"components"`
}

// Sizes are the byte counts of a component or the total; -1 when the lock
// does not say.
type Sizes struct {
	Compressed int64 `json:"compressed_bytes"`
	Unique     int64 `json:"unique_bytes"`
}

var (
	compressedNames = []string{"compressed_bytes", "compressed", "compressedBytes", "compressed_size"}
	uniqueNames     = []string{"unique_bytes", "unique", "uniqueBytes", "unique_size"}
)

// parseFootprint reads a footprint section; a shape it cannot read gives a
// note instead of an error, since the section is informational.
func parseFootprint(raw json.RawMessage) (*Footprint, string) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, "the footprint section is not an object"
	}
	fp := &Footprint{Components: map[string]Sizes{}}
	for _, k := range []string{"total", "totals"} {
		if t, ok := doc[k]; ok {
			if s, ok := sizes(t); ok {
				fp.Total = &s
			}
		}
	}
	if c, ok := doc["components"]; ok {
		var list []map[string]json.RawMessage
		var byName map[string]json.RawMessage
		switch {
		case json.Unmarshal(c, &list) == nil:
			for _, item := range list {
				var n string
				for _, k := range []string{"name", "component"} {
					if v, ok := item[k]; ok && json.Unmarshal(v, &n) == nil && n != "" {
						break
					}
				}
				enc, _ := json.Marshal(item)
				if s, ok := sizes(enc); ok && n != "" {
					fp.Components[n] = s
				}
			}
		case json.Unmarshal(c, &byName) == nil:
			for n, v := range byName {
				if s, ok := sizes(v); ok {
					fp.Components[n] = s
				}
			}
		}
	}
	if fp.Total == nil && len(fp.Components) == 0 {
		return nil, "the footprint section has no total and no components with compressed_bytes/unique_bytes"
	}
	return fp, ""
}

func sizes(raw json.RawMessage) (Sizes, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return Sizes{}, false
	}
	s := Sizes{Compressed: number(m, compressedNames), Unique: number(m, uniqueNames)}
	return s, s.Compressed >= 0 || s.Unique >= 0
}

func number(m map[string]json.RawMessage, names []string) int64 {
	for _, n := range names {
		if v, ok := m[n]; ok {
			var x int64
			if json.Unmarshal(v, &x) == nil && x >= 0 {
				return x
			}
		}
	}
	return -1
}

// FootprintChange compares the footprints of two locks.
type FootprintChange struct {
	Total      *SizeChange  `json:"total,omitempty"`
	Components []SizeChange `json:"components"`
}

// SizeChange is the sizes of a component (or the total) on both sides; a
// side without the component has nil.
type SizeChange struct {
	Name string `json:"name,omitempty"`
	Old  *Sizes `json:"old"`
	New  *Sizes `json:"new"`
}

func (f *FootprintChange) changed() bool {
	if f.Total != nil && !sameSizes(f.Total.Old, f.Total.New) {
		return true
	}
	for _, c := range f.Components {
		if !sameSizes(c.Old, c.New) {
			return true
		}
	}
	return false
}

func sameSizes(a, b *Sizes) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func compareFootprints(a, b *Lock) (*FootprintChange, []string) {
	var notes []string
	for _, l := range []*Lock{a, b} {
		if l.FootprintNote != "" {
			notes = append(notes, fmt.Sprintf("%s: %s; footprint not compared", l.Path, l.FootprintNote))
		}
	}
	if a.Footprint == nil || b.Footprint == nil {
		if (a.Footprint == nil) != (b.Footprint == nil) && len(notes) == 0 {
			only := a.Path
			if b.Footprint != nil {
				only = b.Path
			}
			notes = append(notes, fmt.Sprintf("only %s has a footprint section (build --resolve-sizes); footprint not compared", only))
		}
		return nil, notes
	}
	fc := &FootprintChange{Components: []SizeChange{}}
	if a.Footprint.Total != nil || b.Footprint.Total != nil {
		fc.Total = &SizeChange{Old: a.Footprint.Total, New: b.Footprint.Total}
	}
	var names []string
	for n := range a.Footprint.Components {
		names = append(names, n)
	}
	for n := range b.Footprint.Components {
		if _, ok := a.Footprint.Components[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		sc := SizeChange{Name: n}
		if s, ok := a.Footprint.Components[n]; ok {
			sc.Old = &s
		}
		if s, ok := b.Footprint.Components[n]; ok {
			sc.New = &s
		}
		fc.Components = append(fc.Components, sc)
	}
	return fc, notes
}

func (f *FootprintChange) markdown(b *bytes.Buffer) {
	b.WriteString("\n#### Footprint\n\n| | compressed | unique |\n| --- | --- | --- |\n")
	row := func(label string, o, n *Sizes) {
		fmt.Fprintf(b, "| %s | %s | %s |\n", label,
			sizeChange(o, n, func(s Sizes) int64 { return s.Compressed }),
			sizeChange(o, n, func(s Sizes) int64 { return s.Unique }))
	}
	for _, c := range f.Components {
		row(c.Name, c.Old, c.New)
	}
	if f.Total != nil {
		row("**total**", f.Total.Old, f.Total.New)
	}
}

func sizeChange(o, n *Sizes, field func(Sizes) int64) string {
	get := func(s *Sizes) int64 {
		if s == nil {
			return -1
		}
		return field(*s)
	}
	ov, nv := get(o), get(n)
	switch {
	case ov < 0 && nv < 0:
		return "—"
	case ov < 0:
		return "(none) → " + human(nv)
	case nv < 0:
		return human(ov) + " → (none)"
	case ov == nv:
		return human(nv)
	}
	sign := "+"
	delta := nv - ov
	if delta < 0 {
		sign, delta = "−", -delta
	}
	return fmt.Sprintf("%s → %s (%s%s)", human(ov), human(nv), sign, human(delta))
}

// human prints a byte count in IEC units.
func human(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
