package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// configKey is one config setting as the generator writes it to
// config.toml: what the OpenAPI spec says, with the hand-kept attributes
// over it.
type configKey struct {
	Path            string            `toml:"path"`
	Release         string            `toml:"release"`
	Type            string            `toml:"type"`
	Items           string            `toml:"items,omitempty"`
	Values          []any             `toml:"values,omitempty"`
	CaseInsensitive bool              `toml:"case_insensitive,omitempty"`
	Format          string            `toml:"format,omitempty"`
	Min             *int64            `toml:"min,omitempty"`
	Max             *int64            `toml:"max,omitempty"`
	MinDuration     string            `toml:"min_duration,omitempty"`
	MaxItems        int               `toml:"max_items,omitzero"`
	Zero            string            `toml:"zero,omitempty"`
	Default         any               `toml:"default,omitempty"`
	Check           string            `toml:"check,omitempty"`
	Needs           map[string]string `toml:"needs,omitempty"`
	Off             map[string]string `toml:"off,omitempty"`
	Note            string            `toml:"note,omitempty"`
}

// openAPIConfigKeys reads MicroShift's config OpenAPI spec
// (cmd/generate-config/config/config-openapi-spec.json, generated from its
// Config struct): every leaf setting with its type, the values an enum
// allows ("" added: unset is always allowed) and its default. Paths are
// dotted, "[]" marks the elements of a list of objects, as config.toml
// writes them.
func openAPIConfigKeys(name string, data []byte) (map[string]*configKey, error) {
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	keys := map[string]*configKey{}
	if err := walkSchema(root, "", keys); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no config keys", name)
	}
	return keys, nil
}

func walkSchema(node map[string]any, path string, keys map[string]*configKey) error {
	typ, _ := node["type"].(string)
	props, hasProps := node["properties"].(map[string]any)
	switch {
	case typ == "object" && hasProps && len(props) > 0:
		for _, k := range sortedKeys(props) {
			child, ok := props[k].(map[string]any)
			if !ok {
				return fmt.Errorf("%s: not a schema", join(path, k))
			}
			if err := walkSchema(child, join(path, k), keys); err != nil {
				return err
			}
		}
		return nil
	case path == "":
		return fmt.Errorf("the document is not an object with properties")
	}
	k := &configKey{Path: path}
	keys[path] = k
	switch typ {
	case "string":
		k.Type = "string"
		if f, _ := node["format"].(string); f == "duration" {
			k.Type = "duration"
		}
	case "integer":
		k.Type = "int"
	case "boolean":
		k.Type = "bool"
	case "array":
		items, _ := node["items"].(map[string]any)
		switch it, _ := items["type"].(string); it {
		case "object":
			k.Type = "objects"
			inner, _ := items["properties"].(map[string]any)
			for _, p := range sortedKeys(inner) {
				child, ok := inner[p].(map[string]any)
				if !ok {
					return fmt.Errorf("%s[].%s: not a schema", path, p)
				}
				if err := walkSchema(child, path+"[]."+p, keys); err != nil {
					return err
				}
			}
		case "string":
			k.Type = "list"
			if enum, ok := items["enum"].([]any); ok {
				k.Values = enumValues(enum)
			}
		default:
			return fmt.Errorf("%s: a list of %q", path, it)
		}
	case "object":
		k.Type = "object"
		if addl, ok := node["additionalProperties"].(map[string]any); ok {
			k.Type = "map"
			k.Items, _ = addl["type"].(string)
		}
	case "":
		// A free-form section the spec leaves untyped (kubelet).
		k.Type = "map"
	default:
		return fmt.Errorf("%s: type %q", path, typ)
	}
	if enum, ok := node["enum"].([]any); ok {
		k.Values = enumValues(enum)
	}
	if d, ok := node["default"]; ok {
		k.Default = tomlValue(d)
	}
	return nil
}

// enumValues are an enum's values with "" first: an unset string is
// always allowed.
func enumValues(enum []any) []any {
	out := []any{""}
	for _, e := range enum {
		if s, ok := e.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

// tomlValue converts a decoded JSON value to what the TOML encoder and
// decoder use: int64 for integers.
func tomlValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = tomlValue(x[i])
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k := range x {
			out[k] = tomlValue(x[k])
		}
		return out
	}
	return v
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// applyHand lays the hand-kept attributes of the keys over the generated
// ones: every entry whose path and release match, in file order.
func applyHand(keys map[string]*configKey, hand []HandKey, stream string) error {
	v, err := streamVersion(stream)
	if err != nil {
		return err
	}
	for i := range hand {
		h := &hand[i]
		if !h.matches(v) {
			continue
		}
		k := keys[h.Path]
		if k == nil {
			if h.Release == "" {
				// A key every release of a range has, missing here: the
				// entry is stale or the spec lost the key.
				continue
			}
			return fmt.Errorf("handkept.toml: key %q (release %s): release %s has no such key", h.Path, h.Release, stream)
		}
		if h.Type != "" {
			k.Type = h.Type
		}
		if h.Items != "" {
			k.Items = h.Items
		}
		if h.Values != nil {
			k.Values = h.Values
		}
		if h.CaseInsensitive {
			k.CaseInsensitive = true
		}
		if h.Format != "" {
			k.Format = h.Format
		}
		if h.Min != nil {
			k.Min = h.Min
		}
		if h.Max != nil {
			k.Max = h.Max
		}
		if h.MinDuration != "" {
			k.MinDuration = h.MinDuration
		}
		if h.MaxItems != 0 {
			k.MaxItems = h.MaxItems
		}
		if h.Zero != "" {
			k.Zero = h.Zero
		}
		if h.NoDefault {
			k.Default = nil
		}
		if h.Default != nil {
			k.Default = h.Default
		}
		if h.Check != "" {
			k.Check = h.Check
		}
		if h.Needs != nil {
			k.Needs = h.Needs
		}
		if h.Off != nil {
			k.Off = h.Off
		}
		if h.Note != "" {
			k.Note = strings.Join(strings.Fields(h.Note), " ")
		}
	}
	return nil
}
