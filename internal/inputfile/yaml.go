package inputfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	yaml "go.yaml.in/yaml/v3"
)

// ErrYAMLAliases is wrapped by CheckYAML's error.
var ErrYAMLAliases = errors.New("excessive YAML aliasing")

// YAML expansion limits: a document may expand through its aliases to at
// most MaxYAMLExpansionFactor times its own nodes plus MaxYAMLExpansionSlack.
// Anchors used as intended (a shared block of labels or a merge key) stay
// far below; an alias bomb (nine aliases of nine aliases of ...) expands
// to billions and is refused.
const (
	MaxYAMLExpansionFactor = 10
	MaxYAMLExpansionSlack  = 10_000
)

// CheckYAML refuses YAML whose aliases expand far beyond the document's
// own size, counting the expansion over the parsed node graph, without
// expanding anything, before sigs.k8s.io/yaml, kyaml or kustomize sees the
// data. Data that does not parse as YAML passes: the parser that reads it
// next reports that (in its own words, with its line numbers), and cannot
// expand what it cannot parse.
//
// Before that, it refuses YAML nested deeper than MaxYAMLDepth or holding
// more than MaxYAMLNodes nodes (a scan in constant memory, before any
// parser).
func CheckYAML(data []byte) error {
	_, err := CheckYAMLShape(data)
	return err
}

// CheckYAMLShape is CheckYAML, returning what the structure scan counted:
// a caller bounding a directory of files sums their nodes, one reading a
// single document refuses a second.
func CheckYAMLShape(data []byte) (YAMLShape, error) {
	shape, err := checkYAMLStructure(data)
	if err != nil {
		return shape, err
	}
	return shape, checkAliases(data)
}

// CheckYAMLDocument is CheckYAML for a file read as one YAML document, as
// MicroShift reads its config and lvmd reads its own: a second document
// would be dropped without a word, and is refused.
func CheckYAMLDocument(data []byte) error {
	shape, err := CheckYAMLShape(data)
	if err != nil {
		return err
	}
	if shape.Documents > 1 {
		return fmt.Errorf("line %d: a second YAML document; only the first would be read: keep one document", shape.SecondDocument)
	}
	return nil
}

func checkAliases(data []byte) error {
	if !bytes.Contains(data, []byte("*")) {
		return nil // no alias at all
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for doc := 1; ; doc++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil
		}
		c := counter{memo: map[*yaml.Node]int64{}}
		parsed := c.parsed(&n)
		limit := parsed*MaxYAMLExpansionFactor + MaxYAMLExpansionSlack
		c.limit = limit
		size, ok := c.expanded(&n)
		switch {
		case !ok:
			return fmt.Errorf("document %d: %w (an anchor refers to itself)", doc, ErrYAMLAliases)
		case size >= limit:
			return fmt.Errorf("document %d: %w: %d aliases expand its %d nodes to more than %d; refused before any YAML library expands them", doc, ErrYAMLAliases, c.aliases, parsed, limit)
		}
	}
}

type counter struct {
	memo    map[*yaml.Node]int64
	limit   int64
	aliases int
}

// parsed counts the nodes of the document as written (aliases count one).
func (c *counter) parsed(n *yaml.Node) int64 {
	size := int64(1)
	if n.Kind == yaml.AliasNode {
		c.aliases++
		return size
	}
	for _, child := range n.Content {
		size += c.parsed(child)
	}
	return size
}

// inProgress marks a node whose size is being computed: meeting it again
// is an alias cycle.
const inProgress = -1

// expanded counts the nodes of n with every alias replaced by its anchor's
// node, capped at the limit; false for an alias cycle.
func (c *counter) expanded(n *yaml.Node) (int64, bool) {
	if n == nil {
		return 0, true
	}
	if v, seen := c.memo[n]; seen {
		return v, v != inProgress
	}
	c.memo[n] = inProgress
	size := int64(1)
	if n.Kind == yaml.AliasNode {
		s, ok := c.expanded(n.Alias)
		if !ok {
			return 0, false
		}
		size = s
	}
	for _, child := range n.Content {
		s, ok := c.expanded(child)
		if !ok {
			return 0, false
		}
		size += s
		if size >= c.limit {
			size = c.limit
			break
		}
	}
	c.memo[n] = size
	return size, true
}
