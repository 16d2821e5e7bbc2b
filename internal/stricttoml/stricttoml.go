// Package stricttoml decodes TOML the way every input of the tool is
// decoded: structure bounded first (inputfile.CheckTOML), then
// BurntSushi/toml into a schema struct, and every key the schema does not
// know refused with the closest one it does ("did you mean ...?"). Errors
// are one line naming the file, the line and the key.
//
// It knows no schema of its own: component.toml, catalog.toml and the
// composition file each pass theirs.
package stricttoml

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// Decode decodes TOML into v and rejects keys the schema does not know.
// display names the file in errors. Keys under a free-form prefix (decoded
// into map[string]any) are not checked: BurntSushi/toml reports dotted
// keys three levels deep inside such maps as undecoded even though it
// stored them.
func Decode(display string, data []byte, v any, freeForm ...string) (toml.MetaData, error) {
	if err := inputfile.CheckTOML(data); err != nil {
		return toml.MetaData{}, fmt.Errorf("%s: %w", display, err)
	}
	md, err := toml.NewDecoder(strings.NewReader(string(data))).Decode(v)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			msg := strings.TrimSpace(strings.SplitN(pe.Message, "\n", 2)[0])
			if pe.LastKey != "" {
				return md, fmt.Errorf("%s: line %d: key %s: %s", display, pe.Position.Line, text.QuoteExcerpt(pe.LastKey), msg)
			}
			return md, fmt.Errorf("%s: line %d: %s", display, pe.Position.Line, msg)
		}
		// Type mismatches come as plain errors in the library's own format.
		if m := typeErr.FindStringSubmatch(err.Error()); m != nil {
			return md, fmt.Errorf("%s: line %s: key %q: %s", display, m[1], m[2], humanType(m[3]))
		}
		return md, fmt.Errorf("%s: %s", display, strings.Join(strings.Fields(err.Error()), " "))
	}
	var unknown []string
next:
	for _, k := range md.Undecoded() {
		for _, prefix := range freeForm {
			if strings.HasPrefix(k.String(), prefix+".") {
				continue next
			}
		}
		unknown = append(unknown, k.String())
	}
	if len(unknown) == 0 {
		return md, nil
	}
	sort.Strings(unknown)
	// Keys inside an unknown table are not mistakes of their own.
	outer := unknown[:0]
	for _, k := range unknown {
		if len(outer) > 0 && strings.HasPrefix(k, outer[len(outer)-1]+".") {
			continue
		}
		outer = append(outer, k)
	}
	unknown = outer
	// Each key quoted as an excerpt, and a few of them: a message names
	// the mistake, it does not repeat a hostile file.
	const listed = 5
	var quoted []string
	for i, k := range unknown {
		if i == listed {
			quoted = append(quoted, fmt.Sprintf("(and %d more)", len(unknown)-listed))
			break
		}
		quoted = append(quoted, text.QuoteExcerpt(k))
	}
	where := display
	if line := keyLine(data, unknown[0]); line > 0 {
		where = fmt.Sprintf("%s: line %d", display, line)
	}
	msg := fmt.Sprintf("%s: unknown key %s", where, strings.Join(quoted, ", "))
	if m := suggestKey(unknown[0], Keys(reflect.TypeOf(v), "")); m != "" {
		msg += fmt.Sprintf("; did you mean %q?", m)
	}
	return md, errors.New(msg)
}

var typeErr = lazyregexp.New(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

var typeMismatch = lazyregexp.New(`^incompatible types: TOML value has type (\S+); destination has type (\S+)$`)

// humanType rewrites the library's type mismatch in the schema's terms.
func humanType(msg string) string {
	m := typeMismatch.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	name := func(t string) string {
		switch {
		case strings.HasPrefix(t, "int"), t == "integer":
			return "an integer"
		case t == "string":
			return "a string"
		case t == "bool", t == "boolean":
			return "a boolean"
		case strings.HasPrefix(t, "float"):
			return "a number"
		case strings.HasPrefix(t, "[]"), t == "slice", t == "array":
			return "an array"
		case strings.HasPrefix(t, "map"), t == "struct", t == "table":
			return "a table"
		}
		return t
	}
	return fmt.Sprintf("must be %s, got %s", name(m[2]), name(m[1]))
}

// Keys lists the dotted keys a TOML schema struct accepts; map keys
// (names chosen by the user, such as profile names) are "*".
func Keys(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	var out []string
	if t.Kind() != reflect.Struct {
		return out
	}
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("toml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		full := prefix + tag
		ft := t.Field(i).Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Struct && !textType(ft):
			out = append(out, Keys(ft, full+".")...)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			out = append(out, Keys(ft.Elem(), full+".*.")...)
		default:
			out = append(out, full)
		}
	}
	return out
}

// textType reports whether values of t are decoded from a TOML string (a
// struct implementing encoding.TextUnmarshaler is one value, not a table).
func textType(t reflect.Type) bool {
	_, ok := reflect.PointerTo(t).MethodByName("UnmarshalText")
	return ok
}

// suggestKey finds the schema key closest to an unknown one that differs
// only in its last part: "images.kyes" -> "images.keys".
func suggestKey(unknown string, schema []string) string {
	parts := strings.Split(unknown, ".")
	var names []string
	var prefixOf = map[string]string{}
	for _, k := range schema {
		kp := strings.Split(k, ".")
		if len(kp) != len(parts) {
			continue
		}
		match := true
		for i := range len(kp) - 1 {
			if kp[i] != "*" && kp[i] != parts[i] {
				match = false
				break
			}
		}
		if match {
			last := kp[len(kp)-1]
			names = append(names, last)
			prefixOf[last] = strings.Join(parts[:len(parts)-1], ".")
		}
	}
	m := suggest.Closest(parts[len(parts)-1], names)
	if m == "" {
		return ""
	}
	if p := prefixOf[m]; p != "" {
		return p + "." + m
	}
	return m
}

// keyLine is the line of data where the dotted key is, 0 when it cannot
// be told. The library records every key's position while it parses but
// reports it only with an error about the value being decoded: so the key
// is decoded alone (table by table through toml.Primitive, every element
// of an array of tables) into a value that refuses it, and the position
// the library gives that refusal is the line.
func keyLine(data []byte, key string) int {
	var doc map[string]toml.Primitive
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		return 0
	}
	return primitiveLine(md, doc, strings.Split(key, "."))
}

func primitiveLine(md toml.MetaData, table map[string]toml.Primitive, path []string) int {
	prim, ok := table[path[0]]
	if !ok {
		return 0
	}
	if len(path) == 1 {
		var pe toml.ParseError
		if errors.As(md.PrimitiveDecode(prim, &refuse{}), &pe) {
			return pe.Position.Line
		}
		return 0
	}
	var elems []map[string]toml.Primitive
	if md.PrimitiveDecode(prim, &elems) == nil && len(elems) > 0 {
		for _, e := range elems {
			if line := primitiveLine(md, e, path[1:]); line > 0 {
				return line
			}
		}
		return 0
	}
	var sub map[string]toml.Primitive
	if md.PrimitiveDecode(prim, &sub) == nil {
		return primitiveLine(md, sub, path[1:])
	}
	return 0
}

// refuse is a value that refuses whatever it is decoded from.
type refuse struct{}

func (*refuse) UnmarshalTOML(any) error { return errors.New("located") }
