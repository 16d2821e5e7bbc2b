package request

import (
	"bytes"
	"fmt"

	"github.com/BurntSushi/toml"
)

// SchemaDirective is the first line of a file Encode writes: taplo (and
// the editors built on it) validate and complete the file with the schema
// it names.
const SchemaDirective = "#:schema https://raw.githubusercontent.com/microshift-compose/microshift-compose/main/docs/composition.schema.json"

// Encode writes r as a composition file: the keys given, in the schema's
// order, the sections as tables. Paths are written as they are in r.
func Encode(r Request) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(SchemaDirective + "\n")
	enc := toml.NewEncoder(&buf)
	enc.Indent = ""
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encoding the composition file: %w", err)
	}
	out := buf.Bytes()
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	return out, nil
}
