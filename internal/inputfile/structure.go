package inputfile

import (
	"errors"
	"fmt"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// ErrStructure is wrapped by the structure checks' errors (CheckTOML,
// CheckJSON, CheckYAML): nesting or element counts beyond the gate's
// limits, refused before any decoder runs.
var ErrStructure = errors.New("structure beyond the input limits")

// StructureError is structured text nested too deep or holding too many
// elements: where (a line), what it is near (a short excerpt, never the
// whole 20 KB key), and which limit.
type StructureError struct {
	Line int
	// Near is the rest of the line where the refused construct starts;
	// Error quotes at most text.MaxExcerpt bytes of it.
	Near string
	// What says which limit: "nesting deeper than 32 levels ...".
	What string
}

func (e *StructureError) Error() string {
	if e.Near == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.What)
	}
	return fmt.Sprintf("line %d: %s, at %s", e.Line, e.What, text.QuoteExcerpt(e.Near))
}

func (e *StructureError) Unwrap() error { return ErrStructure }

// structureError builds a StructureError for the construct at offset at
// of data: its line, and the rest of that line, which the message cuts to
// an excerpt saying how long it runs.
func structureError(data []byte, at int, what string) error {
	line, _ := text.Position(data, int64(at))
	end := at
	for end < len(data) && data[end] != '\n' && data[end] != '\r' {
		end++
	}
	return &StructureError{Line: line, Near: string(data[at:end]), What: what}
}

// JSON structure limits (see the package doc). encoding/json holds a
// decoded value at several times the size of its text, and a struct
// decoder walks every element it skips: bounding depth and elements
// before it runs keeps any accepted file's cost in proportion.
const (
	// MaxJSONDepth bounds the nesting of arrays and objects. Release
	// files, locks and payloads nest 6 levels at most.
	MaxJSONDepth = 64
	// MaxJSONValues bounds a file's values (array elements and object
	// members, each container counted once more). A payload of every
	// image of an OpenShift release holds about 10,000.
	MaxJSONValues = 1_000_000
)

// CheckJSON refuses JSON nested deeper than MaxJSONDepth or holding more
// than MaxJSONValues values, before any decoder reads it. It scans the
// text once, in constant memory, counting brackets and commas outside
// strings; it does not check syntax (the decoder reports that).
func CheckJSON(data []byte) error {
	depth, values := 0, 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
			values++
			if depth > MaxJSONDepth {
				return structureError(data, i, fmt.Sprintf("arrays and objects nested deeper than %d levels", MaxJSONDepth))
			}
		case ']', '}':
			depth--
		case ',', ':':
			values++
		}
		if values > MaxJSONValues {
			return structureError(data, i, fmt.Sprintf("more than %d values", MaxJSONValues))
		}
	}
	return nil
}
