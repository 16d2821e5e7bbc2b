// Package lockfile reads and writes compose.lock.json, the plan as JSON: the
// one file a CI job, a diff, mirror and footprint read a build by. Writing is
// deterministic (struct order, sorted maps, no nulls); reading is strict
// (unknown fields, another schema, an arch or image reference the tool would
// not have written, a config edited out of step with its sources) and names
// the file and line. It resolves and renders nothing.
package lockfile

import (
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/text"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// maxLockSize bounds what Load and Parse read: a lock of a full plan with every
// optional component is tens of KB.
const maxLockSize = 16 << 20

// Load reads a compose.lock.json written by build.
func Load(path string) (*plan.Plan, error) {
	data, err := inputfile.Read("lock file", path, maxLockSize)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse decodes a compose.lock.json strictly (unknown fields are an
// error, the schema must be this tool's) and checks what mirror and
// footprint rely on: a known arch and well-formed image references.
// Errors name the file and, for syntax errors, the line.
func Parse(display string, data []byte) (*plan.Plan, error) {
	if len(data) > maxLockSize {
		return nil, fmt.Errorf("%s: lock file is larger than %d bytes", display, maxLockSize)
	}
	if err := inputfile.CheckJSON(data); err != nil {
		return nil, fmt.Errorf("%s: %w", display, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p plan.Plan
	if err := dec.Decode(&p); err != nil {
		var serr *json.SyntaxError
		var terr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &serr):
			return nil, fmt.Errorf("%s:%d: invalid JSON: %v", display, line(data, serr.Offset), err)
		case errors.As(err, &terr):
			return nil, fmt.Errorf("%s:%d: %s: want %s, got %s", display, line(data, terr.Offset), terr.Field, terr.Type, terr.Value)
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("%s: empty lock file", display)
		}
		return nil, fmt.Errorf("%s: %v", display, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: more than one JSON document", display)
	}
	// encoding/json decodes null into a zero value without a word; a lock
	// build writes has no null, so one is a hand edit or damage. Nor has it
	// control characters, which diff would print into Markdown.
	if err := checkValues(display, data); err != nil {
		return nil, err
	}
	if p.Schema != plan.Schema {
		return nil, fmt.Errorf("%s: lock schema %d, this microshift-compose reads schema %d; rebuild the lock with this version", display, p.Schema, plan.Schema)
	}
	if _, err := releases.ParseArch(p.Arch); err != nil {
		return nil, fmt.Errorf("%s: arch: %w", display, err)
	}
	for i, im := range p.Images {
		if strings.TrimSpace(im.Ref) == "" {
			return nil, fmt.Errorf("%s: images[%d]: empty reference", display, i)
		}
		if err := releases.ValidateRef(im.Ref); err != nil {
			return nil, fmt.Errorf("%s: images[%d]: %w", display, i, err)
		}
		if pinned := releases.IsDigestPinned(im.Ref); pinned != im.Pinned {
			return nil, fmt.Errorf("%s: images[%d]: %s has pinned %t, but the reference says %t", display, i, im.Ref, im.Pinned, pinned)
		}
	}
	if err := checkConfigSources(&p); err != nil {
		return nil, fmt.Errorf("%s: %w", display, err)
	}
	return &p, nil
}

// checkConfigSources refuses a lock whose config tree and config_sources
// (one entry per value of the tree, which diff compares) disagree: a hand
// edit of one that diff would not see, or that mirror and build from the
// lock would act on differently.
func checkConfigSources(p *plan.Plan) error {
	leaves := map[string]any{}
	var flatten func(prefix string, m map[string]any)
	flatten = func(prefix string, m map[string]any) {
		for k, v := range m {
			path := strings.TrimPrefix(prefix+"."+k, ".")
			if sub, ok := v.(map[string]any); ok {
				flatten(path, sub)
				continue
			}
			leaves[path] = v
		}
	}
	flatten("", p.Config)
	sources := map[string]any{}
	for i, s := range p.ConfigSources {
		if _, dup := sources[s.Path]; dup {
			return fmt.Errorf("config_sources[%d]: %s is listed twice (the lock was edited: rebuild it)", i, text.Escape(s.Path))
		}
		sources[s.Path] = s.Value
	}
	for _, path := range slices.Sorted(maps.Keys(leaves)) {
		v, ok := sources[path]
		switch {
		case !ok:
			return fmt.Errorf("config: %s is set, but config_sources does not list it (the lock was edited: rebuild it)", text.Escape(path))
		case !reflect.DeepEqual(v, leaves[path]):
			return fmt.Errorf("config: %s is %s, but config_sources says %s (the lock was edited: rebuild it)", text.Escape(path), jsonExcerpt(leaves[path]), jsonExcerpt(v))
		}
	}
	for _, path := range slices.Sorted(maps.Keys(sources)) {
		if _, ok := leaves[path]; !ok {
			return fmt.Errorf("config_sources: %s is listed, but config does not set it (the lock was edited: rebuild it)", text.Escape(path))
		}
	}
	return nil
}

// jsonExcerpt shows a config value in a message, shortened.
func jsonExcerpt(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return text.Excerpt(string(data))
}

func line(data []byte, offset int64) int {
	l, _ := text.Position(data, offset)
	return l
}

// nullable are the lock fields whose value may be null: the config tree and
// its values (YAML null), and the footprint section (written by mirror's
// registry code, read by diff for sizes only).
func nullable(path []string) bool {
	switch {
	case len(path) >= 1 && path[0] == "footprint":
		return true
	case len(path) >= 1 && path[0] == "config":
		return true
	case len(path) == 3 && path[0] == "config_sources" && path[2] == "value":
		return true
	}
	return false
}

// checkValues refuses a JSON null anywhere but where nullable allows it,
// and a key or string with a control character outside the config tree,
// naming the field path and line: "images[0].uses[0]: null".
func checkValues(display string, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		array bool
		index int
		key   string
		// expectKey: in an object, the next string token is a key.
		expectKey bool
	}
	var stack []*frame
	path := func() []string {
		var out []string
		for _, f := range stack {
			if f.array {
				if len(out) == 0 {
					out = append(out, fmt.Sprintf("[%d]", f.index))
				} else {
					out[len(out)-1] += fmt.Sprintf("[%d]", f.index)
				}
			} else {
				out = append(out, f.key)
			}
		}
		return out
	}
	// value is called before each value token: advance array indexes.
	value := func() {
		if n := len(stack); n > 0 {
			top := stack[n-1]
			if top.array {
				top.index++
			} else {
				top.expectKey = true
			}
		}
	}
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil // syntax errors were reported by the decoder already
		}
		unsafe := func(s string) error {
			if !text.HasUnsafe(s) || nullable(path()) {
				return nil
			}
			l, _ := text.Position(data, off)
			return fmt.Errorf("%s:%d: %s: %q holds a control character (a lock build writes has none)", display, l, strings.Join(path(), "."), s)
		}
		if n := len(stack); n > 0 && !stack[n-1].array && stack[n-1].expectKey {
			if k, ok := tok.(string); ok {
				stack[n-1].key = k
				stack[n-1].expectKey = false
				if err := unsafe(k); err != nil {
					return err
				}
				continue
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				value()
				stack = append(stack, &frame{array: t == '[', index: -1, expectKey: t == '{'})
			case '}', ']':
				stack = stack[:len(stack)-1]
				if n := len(stack); n > 0 && !stack[n-1].array {
					stack[n-1].expectKey = true
				}
			}
			continue
		case nil:
			value()
			p := path()
			if !nullable(p) {
				l, _ := text.Position(data, off)
				return fmt.Errorf("%s:%d: %s: null where a value is expected (a lock build writes has none)", display, l, strings.Join(p, "."))
			}
			continue
		case string:
			value()
			if err := unsafe(t); err != nil {
				return err
			}
			continue
		}
		value()
	}
}

// Encode renders compose.lock.json: the plan as indented JSON, keys in
// struct order, maps sorted, no HTML escaping, trailing newline.
func Encode(p *plan.Plan) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(withEmptyLists(p)); err != nil {
		return nil, fmt.Errorf("encoding compose.lock.json: %w", err)
	}
	return b.Bytes(), nil
}

// withEmptyLists makes nil slices and maps encode as [] and {}, at every
// level, so that the lock's shape does not depend on whether a list
// happens to be empty, and a lock never holds null (ParseLock refuses one).
func withEmptyLists(p *plan.Plan) *plan.Plan {
	c := *p
	c.With, c.Without = nonNil(c.With), nonNil(c.Without)
	c.Notes, c.Warnings = nonNil(c.Notes), nonNil(c.Warnings)
	c.Services.Enabled, c.Services.Disabled = nonNil(c.Services.Enabled), nonNil(c.Services.Disabled)
	c.Firewall.Ports, c.Firewall.Services = nonNil(c.Firewall.Ports), nonNil(c.Firewall.Services)
	c.Firewall.TrustedSources = nonNil(c.Firewall.TrustedSources)
	c.Components = make([]plan.Component, len(p.Components))
	for i, comp := range p.Components {
		comp.Provides = nonNil(comp.Provides)
		if comp.Reasons == nil {
			comp.Reasons = []plan.Reason{}
		}
		c.Components[i] = comp
	}
	c.Packages = make([]plan.Package, len(p.Packages))
	for i, pkg := range p.Packages {
		pkg.Components = nonNil(pkg.Components)
		c.Packages[i] = pkg
	}
	c.Images = make([]plan.Image, len(p.Images))
	for i, im := range p.Images {
		if im.Uses == nil {
			im.Uses = []plan.ImageUse{}
		}
		c.Images[i] = im
	}
	if c.Files == nil {
		c.Files = []plan.File{}
	}
	c.Manifests = make([]plan.Manifest, len(p.Manifests))
	for i, m := range p.Manifests {
		m.Resources, m.Images = nonNil(m.Resources), nonNil(m.Images)
		c.Manifests[i] = m
	}
	if c.ConfigSources == nil {
		c.ConfigSources = []plan.ConfigSetting{}
	}
	if c.Config == nil {
		c.Config = map[string]any{}
	}
	if c.Capabilities == nil {
		c.Capabilities = map[string]string{}
	}
	return &c
}

func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
