package knowledge

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
)

// Key types of config.toml.
const (
	TypeString   = "string"
	TypeBool     = "bool"
	TypeInt      = "int"
	TypeUint     = "uint"
	TypeDuration = "duration"
	TypeList     = "list"    // of strings
	TypeObjects  = "objects" // a list of tables
	TypeMap      = "map"     // free-form table
	TypeObject   = "object"  // an empty table
)

// Zero rules: whether a zero value (0, "", [], {}) is a value of its own.
const (
	// ZeroUnset (the default): MicroShift copies only non-zero user
	// values, so a zero value keeps its default.
	ZeroUnset = ""
	// ZeroDefault: the same, said explicitly for numbers with a minimum
	// (0 = unset, else at least min).
	ZeroDefault = "default"
	// ZeroApplies: a zero value is applied (pointer fields, a list whose
	// emptiness means something, a free-form table).
	ZeroApplies = "applies"
)

// Key is one MicroShift config setting.
type Key struct {
	Range
	// Path is dotted; "[]" marks the elements of a list of objects.
	Path  string
	Type  string
	Items string
	// Values are the allowed values (strings, or integers for int keys).
	Values []any
	// CaseInsensitive compares Values ignoring case.
	CaseInsensitive bool
	Format          string
	Min, Max        *int64
	MinDuration     string
	MaxItems        int
	Zero            string
	// Default is what MicroShift uses when the key is unset; nil when not
	// recorded.
	Default any
	Check   string
	// Needs maps a value to the component it only works with.
	Needs map[string]string
	// Off maps a value to the component it turns off (for a list, a value
	// it holds).
	Off map[string]string
	// Note is shown when the key has rules checked only on the device.
	Note string
}

// AllowsValue reports whether v is one of Values (true when none are set).
func (k *Key) AllowsValue(v any) bool {
	if len(k.Values) == 0 {
		return true
	}
	for _, a := range k.Values {
		if as, ok := a.(string); ok {
			if vs, ok := v.(string); ok && (as == vs || k.CaseInsensitive && strings.EqualFold(as, vs)) {
				return true
			}
			continue
		}
		if ai, ok := a.(int64); ok {
			if vi, ok := v.(int64); ok && ai == vi {
				return true
			}
		}
	}
	return false
}

// ValueList formats Values for messages: "", "none", "ovnk".
func (k *Key) ValueList() string {
	parts := make([]string, len(k.Values))
	for i, v := range k.Values {
		if s, ok := v.(string); ok {
			parts[i] = fmt.Sprintf("%q", s)
		} else {
			parts[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, ", ")
}

// Schema is every config key of every release.
type Schema struct {
	Keys []*Key
}

// Rules are the config keys of one release.
type Rules struct {
	Version *semver.Version
	keys    map[string]*Key
	schema  *Schema
}

// For returns the keys release v accepts.
func (s *Schema) For(v *semver.Version) *Rules {
	r := &Rules{Version: v, keys: map[string]*Key{}, schema: s}
	for _, k := range s.Keys {
		if k.Matches(v) {
			if _, dup := r.keys[k.Path]; !dup {
				r.keys[k.Path] = k
			}
		}
	}
	return r
}

// Key returns the key at path ("a.b", "a.list[].c"), or nil when the
// release does not have it.
func (r *Rules) Key(path string) *Key { return r.keys[path] }

// Paths lists the release's key paths, sorted.
func (r *Rules) Paths() []string { return slices.Sorted(maps.Keys(r.keys)) }

// Sections lists the top-level sections the release has, sorted.
func (r *Rules) Sections() []string {
	set := map[string]bool{}
	for p := range r.keys {
		set[strings.SplitN(p, ".", 2)[0]] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// HasPrefix reports whether some key of the release is at or under path:
// a section or a table that holds keys.
func (r *Rules) HasPrefix(path string) bool {
	for p := range r.keys {
		if p == path || strings.HasPrefix(p, path+".") || strings.HasPrefix(p, path+"[]") {
			return true
		}
	}
	return false
}

// Elsewhere says from which release on a key the release lacks exists
// ("" when no release has it), for messages such as "network.multus
// exists from MicroShift 4.19".
func (r *Rules) Elsewhere(path string) string {
	for _, v := range probeVersions() {
		for _, k := range r.schema.Keys {
			if (k.Path == path || strings.HasPrefix(k.Path, path+".") || strings.HasPrefix(k.Path, path+"[]")) && k.Matches(v) {
				if v.GreaterThan(r.Version) {
					return fmt.Sprintf("from MicroShift %d.%d", v.Major(), v.Minor())
				}
				return fmt.Sprintf("in MicroShift %d.%d", v.Major(), v.Minor())
			}
		}
	}
	return ""
}

// probeVersions are the releases Elsewhere looks at: every major.minor of
// 4.x to 6.x.
var probeVersions = sync.OnceValue(func() []*semver.Version {
	var out []*semver.Version
	for major := uint64(4); major <= 6; major++ {
		for minor := uint64(0); minor < 40; minor++ {
			out = append(out, semver.New(major, minor, 0, "", ""))
		}
	}
	return out
})

type schemaTOML struct {
	Key []struct {
		Path            string            `toml:"path"`
		Release         string            `toml:"release"`
		Type            string            `toml:"type"`
		Items           string            `toml:"items"`
		Values          []any             `toml:"values"`
		CaseInsensitive bool              `toml:"case_insensitive"`
		Format          string            `toml:"format"`
		Min             *int64            `toml:"min"`
		Max             *int64            `toml:"max"`
		MinDuration     string            `toml:"min_duration"`
		MaxItems        int               `toml:"max_items"`
		Zero            string            `toml:"zero"`
		Default         any               `toml:"default"`
		Check           string            `toml:"check"`
		Needs           map[string]string `toml:"needs"`
		Off             map[string]string `toml:"off"`
		Note            string            `toml:"note"`
	} `toml:"key"`
}

var (
	knownTypes   = []string{TypeString, TypeBool, TypeInt, TypeUint, TypeDuration, TypeList, TypeObjects, TypeMap, TypeObject}
	knownFormats = []string{"", "cidr", "ip", "ipv6", "url", "dns-subdomain", "node-name", "abs-path", "duration", "port-range", "device-name", "device-permissions", "usb-id", "listen-address"}
	knownZero    = []string{ZeroUnset, ZeroDefault, ZeroApplies}
)

// ParseSchema reads config.toml; name is for messages.
func ParseSchema(name string, data []byte) (*Schema, error) {
	var doc schemaTOML
	if err := decodeStrict(name, data, &doc, "key.default", "key.needs", "key.off"); err != nil {
		return nil, err
	}
	s := &Schema{}
	constraint := constraintParser()
	for i, k := range doc.Key {
		where := fmt.Sprintf("%s: key[%d] %q", name, i, k.Path)
		c, err := constraint(k.Release)
		if err != nil || strings.TrimSpace(k.Release) == "" {
			return nil, fmt.Errorf("%s: release: invalid semver constraint %q", where, k.Release)
		}
		if !slices.Contains(knownTypes, k.Type) {
			return nil, fmt.Errorf("%s: unknown type %q (want one of %s)", where, k.Type, strings.Join(knownTypes, ", "))
		}
		if !slices.Contains(knownFormats, k.Format) {
			return nil, fmt.Errorf("%s: unknown format %q", where, k.Format)
		}
		if !slices.Contains(knownZero, k.Zero) {
			return nil, fmt.Errorf("%s: unknown zero rule %q", where, k.Zero)
		}
		s.Keys = append(s.Keys, &Key{
			Range: Range{Release: k.Release, Constraint: c}, Path: k.Path, Type: k.Type, Items: k.Items,
			Values: k.Values, CaseInsensitive: k.CaseInsensitive, Format: k.Format, Min: k.Min, Max: k.Max,
			MinDuration: k.MinDuration, MaxItems: k.MaxItems, Zero: k.Zero, Default: k.Default,
			Check: k.Check, Needs: k.Needs, Off: k.Off, Note: k.Note,
		})
	}
	return s, nil
}

// constraintParser returns semver.NewConstraint remembering what it
// parsed: the knowledge files repeat a few ranges over hundreds of entries,
// and a parsed constraint is only read afterwards, so one can be shared.
func constraintParser() func(string) (*semver.Constraints, error) {
	parsed := map[string]*semver.Constraints{}
	return func(s string) (*semver.Constraints, error) {
		if c, ok := parsed[s]; ok {
			return c, nil
		}
		c, err := semver.NewConstraint(s)
		if err == nil {
			parsed[s] = c
		}
		return c, err
	}
}
