// Package schema generates the JSON Schema of the composition file from
// request.Request. It is apart from request so that the binary, which
// reads composition files but never writes the schema, does not carry the
// schema generator.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/microshift-compose/microshift-compose/plan/request"
)

// SchemaID is where the checked-in schema is published.
const SchemaID = "https://raw.githubusercontent.com/microshift-compose/microshift-compose/main/docs/composition.schema.json"

// Help is the help text of a flag: the list form (matrix's --profile
// PROFILES) when list is set. Schema takes it from the commands, so that
// the schema says what --help says.
type Help func(flag string, list bool) string

// Values is what the tool takes as a flag's value, as far as a schema can
// say it: for a key holding a list, each element's rule, and the list's
// own (MinItems, Unique). The rules belong to the packages that check the
// values (the catalog's names, the arches, kernel arguments...), which
// the ground floor does not import: the commands give them.
type Values struct {
	// Enum are the only values taken (--arch's spellings, --sbom-format's
	// formats).
	Enum []string
	// Pattern is a regular expression every value matches, in the syntax
	// both Go's regexp and ECMA-262 read (editors validate with the
	// latter).
	Pattern string
	// MaxLength bounds a value, in characters.
	MaxLength int
	// Not are values refused although Pattern matches them (the base
	// system's user accounts).
	Not []string
	// Examples are values an editor offers; others may be taken (a
	// --catalog adds components and profiles).
	Examples []string
	// MinItems is the fewest elements a list takes; Unique refuses a
	// value given twice.
	MinItems int
	Unique   bool
}

// Options are what Generate says beyond the Go types.
type Options struct {
	Help Help
	// Values is the rule of a flag's values; nil, or a zero Values, for
	// none beyond the type's.
	Values func(flag string) Values
}

// Generate is the JSON Schema (draft 2020-12) of a composition file,
// generated from Request: a key's description is its flag's help (with
// the flag named), or the doc tag of a section or table; no key is
// required (flags may give any of them), unknown keys are not allowed.
// It refuses what the commands refuse before they read a file, where a
// schema can say it: an empty string (which chooses nothing), a path
// holding a control character or starting with ~, a duration Go does not
// read or a zero one, a single key together with its matrix list, and the
// values opts.Values rules out.
func Generate(opts Options) ([]byte, error) {
	help := opts.Help
	r := &jsonschema.Reflector{
		FieldNameTag:               "toml",
		RequiredFromJSONSchemaTags: true,
		DoNotReference:             true,
		ExpandedStruct:             true,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			if t == durationType {
				// A duration as the file holds it: one Go reads, not
				// zero (its flag refuses 0s as it does in the file).
				return &jsonschema.Schema{Type: "string", Pattern: durationPattern, AllOf: []*jsonschema.Schema{{Pattern: nonZeroPattern}}}
			}
			return nil
		},
		LookupComment: func(t reflect.Type, field string) string {
			if field == "" {
				return ""
			}
			f, ok := t.FieldByName(field)
			if !ok {
				return ""
			}
			if d := f.Tag.Get("doc"); d != "" {
				return d
			}
			flag := f.Tag.Get("flag")
			if flag == "" {
				return ""
			}
			list := f.Tag.Get("list") != ""
			h := help(flag, list)
			if h == "" {
				return ""
			}
			if list {
				return fmt.Sprintf("%s (matrix --%s). A list.", sentence(asList(h)), flag)
			}
			if f.Type.Kind() == reflect.Slice {
				return fmt.Sprintf("%s (--%s). A list.", sentence(asList(h)), flag)
			}
			return fmt.Sprintf("%s (--%s).", sentence(h), flag)
		},
	}
	s := r.Reflect(&request.Request{})
	s.ID = SchemaID
	s.Title = "microshift-compose composition file"
	s.Description = "One composition (build, resolve, images, mirror -f FILE) or a matrix of them (matrix -f FILE). Paths are relative to the file; flags given on the command line override its keys."
	refine(s, reflect.TypeFor[request.Request](), opts)
	s.AllOf = append(s.AllOf, pairs()...)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("encoding the composition file schema: %w", err)
	}
	return buf.Bytes(), nil
}

var (
	durationType = reflect.TypeFor[request.Duration]()
	pathTypes    = []reflect.Type{
		reflect.TypeFor[request.FilePath](), reflect.TypeFor[request.DirPath](),
		reflect.TypeFor[request.OutputPath](), reflect.TypeFor[request.UpgradeFrom](),
	}
)

// refine adds to the properties of s, the schema of struct t, the rules
// of the values their flags take: every string a flag takes is not empty
// (the commands refuse an empty one, which chooses nothing), a path keeps
// request.CheckPath's rule and is not ~-relative, and opts.Values' rule.
// Sections and tables are refined in turn.
func refine(s *jsonschema.Schema, t reflect.Type, opts Options) {
	for i := range t.NumField() {
		f := t.Field(i)
		key := strings.Split(f.Tag.Get("toml"), ",")[0]
		p, ok := s.Properties.Get(key)
		if !ok {
			continue
		}
		item, elem := p, f.Type
		if f.Type.Kind() == reflect.Slice {
			item, elem = p.Items, f.Type.Elem()
		}
		switch {
		case elem.Kind() == reflect.Struct && f.Tag.Get("flag") == "":
			refine(p, elem, opts)
			continue
		case elem.Kind() == reflect.Struct:
			refine(item, elem, opts) // a table's keys have no flag
		}
		flag := f.Tag.Get("flag")
		if flag == "" || elem.Kind() != reflect.String {
			continue
		}
		item.MinLength = uintPtr(1)
		for _, pt := range pathTypes {
			if elem == pt {
				item.Pattern = pathPattern
				item.AllOf = append(item.AllOf, &jsonschema.Schema{Pattern: notHomePattern})
			}
		}
		if opts.Values == nil {
			continue
		}
		v := opts.Values(flag)
		for _, e := range v.Enum {
			item.Enum = append(item.Enum, e)
		}
		if v.Pattern != "" {
			if item.Pattern == "" {
				item.Pattern = v.Pattern
			} else {
				item.AllOf = append(item.AllOf, &jsonschema.Schema{Pattern: v.Pattern})
			}
		}
		if v.MaxLength > 0 {
			item.MaxLength = uintPtr(v.MaxLength)
		}
		if len(v.Not) > 0 {
			not := &jsonschema.Schema{}
			for _, n := range v.Not {
				not.Enum = append(not.Enum, n)
			}
			item.Not = not
		}
		for _, e := range v.Examples {
			item.Examples = append(item.Examples, e)
		}
		if p != item {
			if v.MinItems > 0 {
				p.MinItems = uintPtr(v.MinItems)
			}
			p.UniqueItems = v.Unique
		}
	}
}

// pairs refuse a single key written together with its matrix list
// (profile and profiles...), as the file's reader does.
func pairs() []*jsonschema.Schema {
	var out []*jsonschema.Schema
	t := reflect.TypeFor[request.Request]()
	for i := range t.NumField() {
		single := t.Field(i).Tag.Get("list")
		if single == "" {
			continue
		}
		list := strings.Split(t.Field(i).Tag.Get("toml"), ",")[0]
		out = append(out, &jsonschema.Schema{
			Title: fmt.Sprintf("%s or %s, not both", single, list),
			Not:   &jsonschema.Schema{Required: []string{single, list}},
		})
	}
	return out
}

func uintPtr(n int) *uint64 {
	u := uint64(n)
	return &u
}

// sentence is a flag's help as the start of a sentence.
func sentence(h string) string {
	h = strings.TrimSpace(h)
	if h == "" {
		return h
	}
	return strings.ToUpper(h[:1]) + h[1:]
}

// listSyntax are the phrases of a list flag's help that say how the
// command line repeats or comma-separates its values, with what replaces
// each in the description of the key, which is a TOML array.
var listSyntax = []struct{ phrase, array string }{
	{" (repeat or comma-separate)", ""},
	{"; repeat or comma-separate)", ")"},
	{" (repeat for more: one directory each, so that a path may hold a comma)", ""},
	{" (repeat, in order)", ", in order"},
	{"; repeat per class)", ")"},
	{"; repeat)", ")"},
	{", repeatable", ""},
	{", comma-separated", ""},
}

// asList is a list flag's help as the description of its key: without how
// the command line gives several values.
func asList(h string) string {
	for _, s := range listSyntax {
		h = strings.ReplaceAll(h, s.phrase, s.array)
	}
	return strings.TrimSuffix(h, "; repeat")
}

const (
	// durationPattern is what time.ParseDuration reads but a negative
	// duration, which is refused: a decimal number with a unit, repeated
	// ("1h30m", "1.5s", ".5s"), after an optional +.
	durationPattern = `^\+?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`
	// nonZeroPattern holds a digit that is not 0: a duration of zero
	// ("0s", "0h0m") chooses nothing and is refused.
	nonZeroPattern = `[1-9]`
	// pathPattern is request.CheckPath's rule: no control, format, line
	// or paragraph separator character.
	pathPattern = `^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]*$`
	// notHomePattern refuses "~" and "~/...": no shell expands them.
	notHomePattern = `^([^~]|~[^/])`
)
