package testutil

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx"
	"github.com/spdx/tools-golang/spdxlib"
)

var spdxSchema struct {
	mu     sync.Mutex
	schema *jsonschema.Schema
}

// SPDXSchema returns the SPDX 2.3 JSON schema of the shared reference
// files (reference/spdx/spdx-2.3-schema.json), compiled once, with its
// formats (date-time, uri) asserted. Missing reference files skip the test
// with one line, or fail it in CI (see Shared).
func SPDXSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	spdxSchema.mu.Lock()
	defer spdxSchema.mu.Unlock()
	if spdxSchema.schema != nil {
		return spdxSchema.schema
	}
	path := Shared(t, "reference", "spdx", "spdx-2.3-schema.json")
	schema, err := compileSchema(path)
	if err != nil {
		t.Fatalf("compiling the SPDX 2.3 schema: %v", err)
	}
	spdxSchema.schema = schema
	return schema
}

func compileSchema(path string) (*jsonschema.Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(path, doc); err != nil {
		return nil, fmt.Errorf("loading %s: %w", path, err)
	}
	return c.Compile(path)
}

// CheckSPDX validates an SPDX 2.3 JSON document by parties other than the
// writer that made it: the SPDX 2.3 JSON schema (SPDXSchema), and
// spdx/tools-golang's JSON reader with its document validation
// (spdxlib.ValidateDocument: every relationship names an element of the
// document). It returns the document as tools-golang read it.
func CheckSPDX(t testing.TB, name string, data []byte) *spdx.Document {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s is not JSON: %v", name, err)
	}
	if err := SPDXSchema(t).Validate(inst); err != nil {
		t.Fatalf("%s does not validate against the SPDX 2.3 schema: %v", name, err)
	}
	doc, err := spdxjson.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("spdx/tools-golang cannot read %s: %v", name, err)
	}
	if err := spdxlib.ValidateDocument(doc); err != nil {
		t.Fatalf("spdx/tools-golang finds %s invalid: %v", name, err)
	}
	return doc
}
