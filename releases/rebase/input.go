package rebase

import (
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/text"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"strings"

	"sigs.k8s.io/yaml"
)

// MaxInputSize bounds how much of a payload or CSV file is read. The
// output of `oc adm release info -o json` is a few hundred kilobytes, a
// CSV less; at this bound a payload costs at most about 100 MB (a 22 MB
// one took 450 MB).
const MaxInputSize = 8 << 20

// NamedImage is one image of a payload or bundle: a payload's tag name or a
// CSV's relatedImages name, and its reference.
type NamedImage struct {
	Name string `json:"name"`
	Ref  string `json:"ref"`
}

// readInput reads a payload or CSV file with a size limit; what names it.
func readInput(what, path string) ([]byte, error) {
	return inputfile.Read(what, path, MaxInputSize)
}

// toJSON turns a JSON or YAML document into JSON, with errors that name
// the file and, for JSON, the line and column.
func toJSON(display string, data []byte) ([]byte, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%s: file is empty", display)
	}
	if trimmed[0] == '{' || trimmed[0] == '[' {
		if err := inputfile.CheckJSON(data); err != nil {
			return nil, fmt.Errorf("%s: %w", display, err)
		}
		// Checked, not decoded: a RawMessage keeps no tree of the
		// document (a 22 MB payload decoded as any took 400 MB).
		dec := json.NewDecoder(bytes.NewReader(data))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, jsonError(display, data, err)
		}
		off := dec.InputOffset()
		for off < int64(len(data)) && strings.IndexByte(" \t\r\n", data[off]) >= 0 {
			off++
		}
		if _, err := dec.Token(); err != io.EOF {
			line, col := text.Position(data, off)
			return nil, fmt.Errorf("%s: line %d, column %d: unexpected data after the JSON document", display, line, col)
		}
		return data, nil
	}
	if err := inputfile.CheckYAML(data); err != nil {
		return nil, fmt.Errorf("%s: %w", display, err)
	}
	if err := inputfile.CheckYAMLKeys(data); err != nil {
		return nil, fmt.Errorf("%s: invalid YAML: %w", display, err)
	}
	out, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
		msg = strings.TrimPrefix(msg, "yaml: ")
		msg = strings.TrimPrefix(text.OneLine(msg), "unmarshal errors: ")
		return nil, fmt.Errorf("%s: invalid YAML: %s", display, msg)
	}
	return out, nil
}

func jsonError(display string, data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := text.Position(data, se.Offset)
		return fmt.Errorf("%s: line %d, column %d: invalid JSON: %v", display, line, col, se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: invalid JSON: unexpected end of file", display)
	}
	return fmt.Errorf("%s: invalid JSON: %v", display, err)
}

// decodeInto decodes converted JSON into v, turning type mismatches into
// "field must be a list, got a string" errors with the field path.
func decodeInto(display string, data []byte, v any) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the document"
		}
		return fmt.Errorf("%s: %s must be %s, got %s", display, field, kindName(te.Type), article(te.Value))
	}
	return fmt.Errorf("%s: %v", display, err)
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	case reflect.Pointer:
		return kindName(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	}
	return "a number"
}

func article(jsonKind string) string {
	switch jsonKind {
	case "array":
		return "a list"
	case "object":
		return "a mapping"
	case "string", "number", "bool":
		if jsonKind == "bool" {
			jsonKind = "boolean"
		}
		return "a " + jsonKind
	}
	return jsonKind
}

// quoteList formats names for messages: "a", "b", "c" (and 4 more).
func quoteList(names []string, limit int) string {
	var b strings.Builder
	for i, n := range names {
		if i == limit {
			fmt.Fprintf(&b, " (and %d more)", len(names)-limit)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", n)
	}
	return b.String()
}

// cause drops the path an *fs.PathError repeats: messages here name the
// file already.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
