package testutil

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var cdxSchema struct {
	mu     sync.Mutex
	schema *jsonschema.Schema
}

// CycloneDXSchema returns the CycloneDX 1.6 JSON schema (with the SPDX
// license list and JSF schemas it references) kept in
// render/sbom/testdata/cyclonedx, compiled once, with its formats
// (date-time, iri-reference, idn-email) asserted.
func CycloneDXSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	cdxSchema.mu.Lock()
	defer cdxSchema.mu.Unlock()
	if cdxSchema.schema != nil {
		return cdxSchema.schema
	}
	dir := filepath.Join(Root(t), "render", "sbom", "testdata", "cyclonedx")
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, f := range []string{"bom-1.6.schema.json", "spdx.schema.json", "jsf-0.82.schema.json"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("reading %s: %v", f, err)
		}
		// The schemas name each other by their $id.
		if err := c.AddResource("http://cyclonedx.org/schema/"+f, doc); err != nil {
			t.Fatalf("loading %s: %v", f, err)
		}
	}
	schema, err := c.Compile("http://cyclonedx.org/schema/bom-1.6.schema.json")
	if err != nil {
		t.Fatalf("compiling the CycloneDX 1.6 schema: %v", err)
	}
	cdxSchema.schema = schema
	return schema
}

// CheckCycloneDX validates a CycloneDX 1.6 JSON document against the
// CycloneDX 1.6 schema and reads it back with cyclonedx-go's decoder,
// which it returns.
func CheckCycloneDX(t testing.TB, name string, data []byte) *cdx.BOM {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s is not JSON: %v", name, err)
	}
	if err := CycloneDXSchema(t).Validate(inst); err != nil {
		t.Fatalf("%s does not validate against the CycloneDX 1.6 schema: %v", name, err)
	}
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(data), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatalf("cyclonedx-go cannot read %s: %v", name, err)
	}
	if bom.SpecVersion != cdx.SpecVersion1_6 {
		t.Fatalf("%s: specVersion %s, want 1.6", name, bom.SpecVersion)
	}
	return &bom
}
