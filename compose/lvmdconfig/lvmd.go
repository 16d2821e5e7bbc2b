package lvmdconfig

import (
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/text"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/internal/suggest"
)

// DevicePath is where MicroShift reads lvmd.yaml on the device.
const DevicePath = "/etc/microshift/lvmd.yaml"

// MaxSize bounds an lvmd.yaml; real ones are a few hundred bytes.
const MaxSize = 1 << 20

// Device-class types. An unset type is thick.
const (
	TypeThin  = "thin"
	TypeThick = "thick"
)

// Config is a checked lvmd.yaml.
type Config struct {
	// Source is the file path, for messages.
	Source string
	// Data is the file as written: it lands on the device unchanged.
	Data []byte
	// Empty is set for a file without a document (empty, only comments,
	// or null): what MicroShift does with it depends on the release (it
	// crashes before 5.0 and refuses it from 5.0), so the plan, which knows
	// the release, refuses it with that reason. It has no device classes.
	Empty         bool
	SocketName    string
	DeviceClasses []DeviceClass
}

// DeviceClass is one entry of device-classes.
type DeviceClass struct {
	Name            string
	VolumeGroup     string
	Default         bool
	SpareGB         *uint64
	Type            string
	ThinPool        *ThinPool
	Stripe          *uint64
	StripeSize      string
	LVCreateOptions []string
}

// ThinPool is a device class's thin-pool.
type ThinPool struct {
	Name               string
	OverprovisionRatio float64
}

// Default returns the default device class.
func (c *Config) Default() DeviceClass {
	for _, dc := range c.DeviceClasses {
		if dc.Default {
			return dc
		}
	}
	return DeviceClass{}
}

var (
	topKeys         = []string{"socket-name", "device-classes"}
	deviceClassKeys = []string{"name", "volume-group", "default", "spare-gb", "type", "thin-pool", "stripe", "stripe-size", "lvcreate-options"}
	thinPoolKeys    = []string{"name", "overprovision-ratio"}

	// A device-class name becomes part of the node annotation key
	// capacity.topolvm.io/<name>: a qualified name part.
	classNamePattern = lazyregexp.New(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	// LVM names: letters, digits and +_.-, not starting with '-'.
	lvmNamePattern  = lazyregexp.New(`^[A-Za-z0-9+_.][A-Za-z0-9+_.-]*$`)
	stripeSizeRegex = lazyregexp.New(`^[0-9]+[kKmMgGtTpPeE]?$`)
)

// Load reads and checks an lvmd.yaml.
func Load(file string) (*Config, error) {
	data, err := inputfile.Read("lvmd config", file, MaxSize)
	if err != nil {
		return nil, err
	}
	return Parse(file, data)
}

// Parse checks an lvmd.yaml document; display names it in errors, which
// are one line: "<display>: <field path>: <problem>". A file without a
// document is no error here: Config.Empty says so.
func Parse(display string, data []byte) (*Config, error) {
	c, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", display, err)
	}
	c.Source = display
	c.Data = data
	return c, nil
}

func parse(data []byte) (*Config, error) {
	var doc any
	if len(bytes.TrimSpace(data)) > 0 {
		if err := inputfile.CheckYAMLDocument(data); err != nil {
			return nil, err
		}
		if err := inputfile.CheckYAMLKeys(data); err != nil {
			return nil, fmt.Errorf("invalid YAML: %w", err)
		}
		js, err := yaml.YAMLToJSONStrict(data)
		if err != nil {
			return nil, fmt.Errorf("invalid YAML: %s", text.OneLine(strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")))
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("invalid YAML: %v", err)
		}
	}
	c := &Config{}
	if doc == nil {
		// No document, only comments, or null: MicroShift's YAML decoding
		// leaves it no config at all, as for an empty file.
		c.Empty = true
		return c, nil
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the document must be a mapping, got %s", kind(doc))
	}
	if err := unknownKeys("", top, topKeys); err != nil {
		return nil, err
	}
	if v, ok := top["socket-name"]; ok && v != nil {
		s, err := str("socket-name", v)
		if err != nil {
			return nil, err
		}
		if !path.IsAbs(s) {
			return nil, fmt.Errorf("socket-name: %q must be an absolute path", s)
		}
		c.SocketName = s
	}
	list, ok := top["device-classes"].([]any)
	if v := top["device-classes"]; v != nil && !ok {
		return nil, fmt.Errorf("device-classes: must be a list, got %s", kind(v))
	}
	if len(list) == 0 {
		return nil, errors.New("device-classes: must list at least one device class")
	}
	names := map[string]int{}
	defaultAt := -1
	for i, e := range list {
		where := fmt.Sprintf("device-classes[%d]", i)
		dc, err := deviceClass(where, e)
		if err != nil {
			return nil, err
		}
		if j, dup := names[dc.Name]; dup {
			return nil, fmt.Errorf("%s.name: %q is already used by device-classes[%d]", where, dc.Name, j)
		}
		names[dc.Name] = i
		if dc.Default {
			if defaultAt >= 0 {
				return nil, fmt.Errorf("%s.default: only one device class may be the default (device-classes[%d] is)", where, defaultAt)
			}
			defaultAt = i
		}
		c.DeviceClasses = append(c.DeviceClasses, dc)
	}
	if defaultAt < 0 {
		return nil, errors.New("device-classes: exactly one device class must have default: true, found none")
	}
	return c, nil
}

func deviceClass(where string, v any) (DeviceClass, error) {
	var dc DeviceClass
	m, ok := v.(map[string]any)
	if !ok {
		return dc, fmt.Errorf("%s: must be a mapping, got %s", where, kind(v))
	}
	if err := unknownKeys(where, m, deviceClassKeys); err != nil {
		return dc, err
	}
	var err error
	if dc.Name, err = required(where+".name", m["name"]); err != nil {
		return dc, err
	}
	if len(dc.Name) > 63 || !classNamePattern.MatchString(dc.Name) {
		return dc, fmt.Errorf("%s.name: %q must be at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (it becomes part of the node annotation capacity.topolvm.io/<name>)", where, dc.Name)
	}
	if dc.VolumeGroup, err = required(where+".volume-group", m["volume-group"]); err != nil {
		return dc, err
	}
	if problem := lvmNameProblem(dc.VolumeGroup); problem != "" {
		return dc, fmt.Errorf("%s.volume-group: %q is not an LVM volume group name (%s)", where, dc.VolumeGroup, problem)
	}
	if v := m["default"]; v != nil {
		b, ok := v.(bool)
		if !ok {
			return dc, fmt.Errorf("%s.default: must be true or false, got %s", where, kind(v))
		}
		dc.Default = b
	}
	if v := m["spare-gb"]; v != nil {
		n, err := whole(where+".spare-gb", v, 0, "a whole number of GiB >= 0")
		if err != nil {
			return dc, err
		}
		dc.SpareGB = &n
	}
	if v := m["stripe"]; v != nil {
		n, err := whole(where+".stripe", v, 1, "a whole number >= 1")
		if err != nil {
			return dc, err
		}
		dc.Stripe = &n
	}
	if v := m["stripe-size"]; v != nil {
		s, err := str(where+".stripe-size", v)
		if err != nil {
			return dc, err
		}
		if !stripeSizeRegex.MatchString(s) {
			return dc, fmt.Errorf("%s.stripe-size: %q is not a size such as 64k or 1m (lvcreate --stripesize)", where, s)
		}
		dc.StripeSize = s
	}
	if v := m["lvcreate-options"]; v != nil {
		list, ok := v.([]any)
		if !ok {
			return dc, fmt.Errorf("%s.lvcreate-options: must be a list of strings, got %s", where, kind(v))
		}
		for i, e := range list {
			s, err := str(fmt.Sprintf("%s.lvcreate-options[%d]", where, i), e)
			if err != nil {
				return dc, err
			}
			dc.LVCreateOptions = append(dc.LVCreateOptions, s)
		}
	}
	if v := m["type"]; v != nil {
		s, err := str(where+".type", v)
		if err != nil {
			return dc, err
		}
		if s != TypeThin && s != TypeThick {
			msg := fmt.Sprintf("%s.type: %q must be thin or thick", where, s)
			if sug := suggest.Closest(strings.ToLower(s), []string{TypeThin, TypeThick}); sug != "" && sug != s {
				msg += fmt.Sprintf("; did you mean %q?", sug)
			}
			return dc, errors.New(msg)
		}
		dc.Type = s
	}
	pool, hasPool := m["thin-pool"]
	hasPool = hasPool && pool != nil
	switch {
	case dc.Type == TypeThin && !hasPool:
		return dc, fmt.Errorf("%s.thin-pool: required when type is thin", where)
	case dc.Type == TypeThick && hasPool:
		return dc, fmt.Errorf("%s.thin-pool: not allowed when type is thick (set type: thin)", where)
	case dc.Type == "" && hasPool:
		return dc, fmt.Errorf("%s.thin-pool: not allowed when type is thick (the default; set type: thin)", where)
	case hasPool:
		tp, err := thinPool(where+".thin-pool", pool)
		if err != nil {
			return dc, err
		}
		dc.ThinPool = tp
	}
	return dc, nil
}

func thinPool(where string, v any) (*ThinPool, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: must be a mapping, got %s", where, kind(v))
	}
	if err := unknownKeys(where, m, thinPoolKeys); err != nil {
		return nil, err
	}
	tp := &ThinPool{}
	var err error
	if tp.Name, err = required(where+".name", m["name"]); err != nil {
		return nil, err
	}
	if problem := lvmNameProblem(tp.Name); problem != "" {
		return nil, fmt.Errorf("%s.name: %q is not an LVM logical volume name (%s)", where, tp.Name, problem)
	}
	r, ok := m["overprovision-ratio"]
	if !ok || r == nil {
		return nil, fmt.Errorf("%s.overprovision-ratio: required (a number >= 1.0)", where)
	}
	n, isNum := r.(json.Number)
	if !isNum {
		return nil, fmt.Errorf("%s.overprovision-ratio: must be a number >= 1.0, got %s", where, kind(r))
	}
	f, err := n.Float64()
	if err != nil || f < 1 {
		return nil, fmt.Errorf("%s.overprovision-ratio: must be a number >= 1.0, got %s", where, n)
	}
	tp.OverprovisionRatio = f
	return tp, nil
}

func lvmNameProblem(s string) string {
	switch {
	case len(s) > 127:
		return "at most 127 characters"
	case s == "." || s == ".." || !lvmNamePattern.MatchString(s):
		return "letters, digits and +_.-, not starting with '-'"
	}
	return ""
}

// unknownKeys rejects keys the schema does not have, suggesting the
// closest one: lvmd itself ignores them, so a typo silently loses a setting.
func unknownKeys(where string, m map[string]any, known []string) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if slices.Contains(known, k) {
			continue
		}
		prefix := ""
		if where != "" {
			prefix = where + ": "
		}
		if s := suggest.Closest(k, known); s != "" {
			return fmt.Errorf("%sunknown key %q; did you mean %q?", prefix, k, s)
		}
		return fmt.Errorf("%sunknown key %q (want %s)", prefix, k, strings.Join(known, ", "))
	}
	return nil
}

func required(where string, v any) (string, error) {
	if v == nil {
		return "", fmt.Errorf("%s: required", where)
	}
	s, err := str(where, v)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%s: required", where)
	}
	return s, nil
}

func str(where string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: must be a string, got %s", where, kind(v))
	}
	return s, nil
}

func whole(where string, v any, lowest uint64, want string) (uint64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s: must be %s, got %s", where, want, kind(v))
	}
	var u uint64
	if _, err := fmt.Sscan(n.String(), &u); err != nil || fmt.Sprint(u) != n.String() || u < lowest {
		return 0, fmt.Errorf("%s: must be %s, got %s", where, want, n)
	}
	return u, nil
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}
