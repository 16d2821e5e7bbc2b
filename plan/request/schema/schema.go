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

// Generate is the JSON Schema (draft 2020-12) of a composition file,
// generated from Request: a key's description is its flag's help (with
// the flag named), or the doc tag of a section or table; no key is
// required (flags may give any of them), unknown keys are not allowed.
func Generate(help Help) ([]byte, error) {
	r := &jsonschema.Reflector{
		FieldNameTag:               "toml",
		RequiredFromJSONSchemaTags: true,
		DoNotReference:             true,
		ExpandedStruct:             true,
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			if t == reflect.TypeFor[request.Duration]() {
				// A duration as the file holds it.
				return &jsonschema.Schema{Type: "string", Pattern: durationPattern}
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
				return fmt.Sprintf("%s (matrix --%s). A list.", sentence(h), flag)
			}
			return fmt.Sprintf("%s (--%s).", sentence(h), flag)
		},
	}
	s := r.Reflect(&request.Request{})
	s.ID = SchemaID
	s.Title = "microshift-compose composition file"
	s.Description = "One composition (build, resolve, images, mirror -f FILE) or a matrix of them (matrix -f FILE). Paths are relative to the file; flags given on the command line override its keys."
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("encoding the composition file schema: %w", err)
	}
	return buf.Bytes(), nil
}

// sentence is a flag's help as the start of a sentence.
func sentence(h string) string {
	h = strings.TrimSpace(h)
	if h == "" {
		return h
	}
	return strings.ToUpper(h[:1]) + h[1:]
}

// durationPattern is what time.ParseDuration reads (unsigned).
const durationPattern = `^([0-9]+(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$`
