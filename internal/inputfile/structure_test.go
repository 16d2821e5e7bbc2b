package inputfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	yaml "go.yaml.in/yaml/v3"
)

func nest(open, inner, close string, n int) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

func TestCheckTOML(t *testing.T) {
	deepKey := "a" + strings.Repeat(".a", 10<<10)
	for _, tc := range []struct {
		name, data, want string
	}{
		{"a real component", "name = \"x\"\n[files.\"etc/a\"]\nsource = \"a\"\nmode = \"0644\"\n[[images]]\nref = 'q.io/a:1' # c\n", ""},
		{"strings hold brackets and dots", "a = \"[[[{{{a.b.c\"\nb = '''\n[x.y.z]\n'''\nc = \"\"\"\n{{{\"\"\"\n", ""},
		{"32 levels of inline tables", "x = " + nest("{a = ", "1", "}", 31), ""},
		{"40 KB of nested inline tables", "x = " + nest("{a = ", "1", "}", 40<<10/6), "line 1: nesting deeper than 32 levels"},
		{"nested arrays", "x = " + nest("[", "", "]", 100), "line 1: nesting deeper than 32 levels"},
		{"a 20 KB dotted key", "name = \"x\"\n" + deepKey + " = 1\n", "line 2: nesting deeper than 32 levels"},
		{"a deep table header", "[" + deepKey + "]\n", "line 1: nesting deeper than 32 levels"},
		{"a header plus a dotted key", "[" + strings.Repeat("a.", 20) + "a]\n" + strings.Repeat("b.", 12) + "b = 1\n", "line 2: nesting deeper"},
		{"too many keys", strings.Repeat("k = [1,1,1,1,1,1,1,1,1,1]\n", MaxTOMLValues/10), "more than 100000 keys and values"},
		{"unterminated things are the decoder's", "a = \"x\nb = [1, {\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTOML([]byte(tc.data))
			checkStructureErr(t, err, tc.want)
		})
	}
}

func checkStructureErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("err = %v, want nil", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if !errors.Is(err, ErrStructure) {
		t.Errorf("%v is not ErrStructure", err)
	}
	if len(err.Error()) > 300 || strings.ContainsAny(err.Error(), "\n\r") {
		t.Errorf("the error is not one short line (%d bytes): %q", len(err.Error()), err)
	}
}

func TestCheckJSON(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"a lock", `{"schema": 1, "images": [{"ref": "q.io/a:1", "uses": ["x"]}], "s": "[[[{{{\"]]]"}`, ""},
		{"64 levels", nest("[", "", "]", 64), ""},
		{"65 levels", nest("[", "", "]", 65), "line 1: arrays and objects nested deeper than 64 levels"},
		{"deep objects on line 3", "{\n\n" + nest(`{"a":`, "1", "}", 100) + "}", "line 3: arrays and objects nested deeper"},
		{"a million values", "[" + strings.Repeat("0,", MaxJSONValues) + "0]", "more than 1000000 values"},
		{"an escaped quote does not end a string", `["\"[[[[", 1]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { checkStructureErr(t, CheckJSON([]byte(tc.data)), tc.want) })
	}
}

func TestCheckYAMLStructure(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"a config", "apiServer:\n  subjectAltNames:\n  - a.example.com # c: [\n  - \"b: {\"\nnetwork: {clusterNetwork: [10.42.0.0/16]}\n", ""},
		{"a block scalar is not structure", "a: |\n  - - - - [ [ [ { {\n  x: y: z:\nb: >-\n  {\n", ""},
		{"deep flow", "a: " + nest("[", "", "]", 101), "YAML nested deeper than 100 levels"},
		{"deep blocks", func() string {
			var b strings.Builder
			for i := range 101 {
				b.WriteString(strings.Repeat(" ", i) + "a:\n")
			}
			return b.String()
		}(), "line 101: YAML nested deeper than 100 levels"},
		{"deep sequence entries", strings.Repeat("- ", 101) + "x\n", "YAML nested deeper than 100 levels"},
		{"a flow list of 200,001 nodes", "x: [" + strings.Repeat("0,", MaxYAMLNodes) + "0]\n", "more than 200000 YAML nodes"},
		{"a block list of 200,001 nodes", "x:\n" + strings.Repeat("- 0\n", MaxYAMLNodes+1), "more than 200000 YAML nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkStructureErr(t, CheckYAML([]byte(tc.data)), tc.want) })
	}
}

func TestCheckYAMLDocument(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"a: 1\n", ""},
		{"---\na: 1\n", ""},
		{"---\na: 1\n---\n", ""},
		{"# c\n---\n# only a comment\n---\na: 1\n", ""},
		{"a: 1\n---\nb: 2\n", "line 2: a second YAML document"},
		{"---\na: 1\n--- {b: 2}\n", "line 3: a second YAML document"},
		{"a: |\n  ---\n  x\n", ""}, // a marker inside a block scalar is indented
	} {
		err := CheckYAMLDocument([]byte(tc.data))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("CheckYAMLDocument(%q) = %q, want %q", tc.data, got, tc.want)
		}
	}
}

// tomlDepth is the nesting of a decoded TOML value.
func valueDepth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, valueDepth(e))
		}
	case []any:
		for _, e := range x {
			d = max(d, valueDepth(e))
		}
	case []map[string]any:
		for _, e := range x {
			d = max(d, valueDepth(e))
		}
	default:
		return 0
	}
	return d + 1
}

// FuzzCheckTOML: CheckTOML never panics, scans in linear time, and what
// it accepts and the decoder decodes is nested no deeper than its limit.
func FuzzCheckTOML(f *testing.F) {
	f.Add([]byte("a.b.c = {d = [1, {e = 2}]}\n[x.y]\n[[z]]\nq = '''\n]]\n'''\n"))
	f.Add([]byte("x = " + nest("{a = ", "1", "}", 40)))
	f.Add([]byte("a = \"\\\"[\"\nb = [ # c\n 1,\n]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := CheckTOML(data); err != nil {
			if !errors.Is(err, ErrStructure) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("CheckTOML error %q is not one line wrapping ErrStructure", err)
			}
			return
		}
		var v map[string]any
		if _, err := toml.Decode(string(data), &v); err != nil {
			return
		}
		if d := valueDepth(v); d > MaxTOMLDepth+1 {
			t.Fatalf("accepted TOML that decodes %d levels deep", d)
		}
	})
}

// FuzzCheckJSON: CheckJSON never panics, and what it accepts and
// encoding/json decodes is nested no deeper than its limit.
func FuzzCheckJSON(f *testing.F) {
	f.Add([]byte(`{"a": [1, {"b": "]]}"}]}`))
	f.Add([]byte(nest("[", "", "]", 70)))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := CheckJSON(data); err != nil {
			if !errors.Is(err, ErrStructure) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("CheckJSON error %q is not one line wrapping ErrStructure", err)
			}
			return
		}
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		if d := valueDepth(v); d > MaxJSONDepth {
			t.Fatalf("accepted JSON that decodes %d levels deep", d)
		}
	})
}

// FuzzCheckYAMLDocument: the YAML scan never panics, and what it accepts
// as one document a YAML parser reads as at most one document with
// content.
func FuzzCheckYAMLDocument(f *testing.F) {
	f.Add([]byte("a: 1\n---\nb: 2\n"))
	f.Add([]byte("a: |\n  ---\n- [x, {y: z}]\n"))
	f.Add([]byte("'a\n---\nb': 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := CheckYAMLDocument(data); err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q is not one line", err)
			}
			return
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		docs := 0
		for {
			var n yaml.Node
			if err := dec.Decode(&n); err != nil {
				return
			}
			if len(n.Content) > 0 && !(n.Content[0].Kind == yaml.ScalarNode && n.Content[0].Tag == "!!null") {
				docs++
			}
			if docs > 1 {
				t.Fatalf("accepted YAML with a second document")
			}
		}
	})
}
