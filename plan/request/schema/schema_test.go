package schema_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/microshift-compose/microshift-compose/plan/request"
	"github.com/microshift-compose/microshift-compose/plan/request/schema"
)

const repoRoot = "../../.."

// compiled is the checked-in schema (docs/composition.schema.json, which
// cmd/microshift-compose's TestCompositionSchemaUpToDate keeps equal to
// Generate's), compiled by a JSON Schema validator.
func compiled(t *testing.T) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(repoRoot, "docs", "composition.schema.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(path, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(path)
	if err != nil {
		t.Fatalf("compiling %s: %v", path, err)
	}
	return s
}

// instance is a TOML document as the JSON value an editor validates.
func instance(t *testing.T, name string, data []byte) any {
	t.Helper()
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestExamplesValidate validates every example composition file against
// the schema, and the examples read by Load.
func TestExamplesValidate(t *testing.T) {
	s := compiled(t)
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "*", "*.toml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(instance(t, f, data)); err != nil {
			t.Errorf("%s does not validate against the schema: %v", f, err)
		}
		if _, _, err := request.Load(f); err != nil {
			t.Errorf("request.Load: %v", err)
		}
	}
}

// TestSchemaRefuses checks that the schema refuses what Load refuses
// before reading a path: unknown keys, wrong types, bad durations.
func TestSchemaRefuses(t *testing.T) {
	s := compiled(t)
	for _, tc := range []struct{ name, doc, want string }{
		{"unknown key", "profle = 'full'\n", "additional properties 'profle' not allowed"},
		{"unknown nested key", "[registry]\npull_secrets = 'a'\n", "additional properties 'pull_secrets' not allowed"},
		{"unknown section", "[hardening]\nfips = true\n", "additional properties 'hardening' not allowed"},
		{"wrong type", "with = 'multus'\n", "got string, want array"},
		{"wrong nested type", "[bootc]\nenabled = 'yes'\n", "got string, want boolean"},
		{"bad duration", "[health_checks]\ntimeout = '10 minutes'\n", "does not match pattern"},
		{"storage class without its class", "[[microshift.storage_classes]]\nname = 'fast'\n", "missing property 'device_class'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Validate(instance(t, tc.name, []byte(tc.doc)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
	ok := "profiles = ['minimal', 'full']\nplugin_timeout = '1m30s'\n[installer]\nfilesystems = [{mountpoint = '/', minsize = '20GiB'}]\n"
	if err := s.Validate(instance(t, "ok", []byte(ok))); err != nil {
		t.Fatalf("Validate(%q) = %v", ok, err)
	}
}

// TestGenerate checks that every key has a description, a flag's from its
// help text naming the flag.
func TestGenerate(t *testing.T) {
	data, err := schema.Generate(schema.Options{Help: func(flag string, list bool) string {
		if list {
			return "lists of " + flag
		}
		return "help of " + flag
	}})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var props int
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		if p, ok := s["properties"].(map[string]any); ok {
			if s["additionalProperties"] != false {
				t.Errorf("%s allows unknown keys", path)
			}
			for k, v := range p {
				props++
				sub := v.(map[string]any)
				if d, _ := sub["description"].(string); d == "" {
					t.Errorf("%s.%s has no description", path, k)
				}
				walk(path+"."+k, sub)
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
	}
	walk("", doc)
	if props < 45 {
		t.Errorf("the schema has %d properties, want every key of the file", props)
	}
	for _, want := range []string{`"Help of pull-secret (--pull-secret)."`, `"Lists of profile (matrix --profile). A list."`, `"$id": "` + schema.SchemaID + `"`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("schema lacks %s", want)
		}
	}
}

// TestArraysDescribedAsArrays: a key holding a list is described as the
// TOML array it is, not with its flag's command-line syntax (repeat the
// flag, comma-separate its values), and says it is a list.
func TestArraysDescribedAsArrays(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "composition.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	arrays := 0
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		props, _ := s["properties"].(map[string]any)
		for k, v := range props {
			sub := v.(map[string]any)
			if sub["type"] == "array" {
				arrays++
				d, _ := sub["description"].(string)
				if strings.Contains(d, "comma-separate") || strings.Contains(d, "repeat") || !strings.HasSuffix(d, "A list.") {
					t.Errorf("%s%s: %q describes the flag's syntax, not a list", path, k, d)
				}
			}
			walk(path+k+".", sub)
		}
	}
	walk("", doc)
	if arrays < 10 {
		t.Errorf("%d arrays in the schema", arrays)
	}
}

// TestGenerateValues: a flag's Values become the rules of its key, or of
// each element of its list.
func TestGenerateValues(t *testing.T) {
	data, err := schema.Generate(schema.Options{
		Help: func(flag string, list bool) string { return "help of " + flag },
		Values: func(flag string) schema.Values {
			switch flag {
			case "arch":
				return schema.Values{Enum: []string{"x86_64", "aarch64"}}
			case "karg":
				return schema.Values{Pattern: "^[a-z]+$", MaxLength: 8, Unique: true, MinItems: 1}
			case "user":
				return schema.Values{Not: []string{"root"}, Examples: []string{"admin"}}
			}
			return schema.Values{}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Properties map[string]json.RawMessage
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"arch":        `"enum":["x86_64","aarch64"],"minLength":1`,
		"arches":      `"items":{"type":"string","enum":["x86_64","aarch64"],"minLength":1}`,
		"kernel_args": `"items":{"type":"string","maxLength":8,"minLength":1,"pattern":"^[a-z]+$"},"type":"array","minItems":1,"uniqueItems":true`,
	} {
		var compact bytes.Buffer
		if err := json.Compact(&compact, doc.Properties[key]); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(compact.String(), want) {
			t.Errorf("%s = %s, want it to hold %s", key, compact.String(), want)
		}
	}
	for _, want := range []string{`"not": {`, `"examples": [`, `"title": "profile or profiles, not both"`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the schema lacks %s", want)
		}
	}
}
