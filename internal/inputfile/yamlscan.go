package inputfile

import (
	"fmt"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// YAML structure limits (see the package doc). The YAML libraries the
// tool reads YAML with (sigs.k8s.io/yaml, kyaml under kustomize) hold
// every node as a Go value several hundred bytes large, and kustomize a
// resource in several copies: a 1 MiB flow list of zeros is half a million
// nodes. The limits are far above what real files hold (a MicroShift
// config has a few hundred nodes; the largest CRD bundle in the wild,
// about 60,000, nested 30 levels).
const (
	// MaxYAMLDepth bounds nesting: block indentation levels, sequence
	// entries on one line ("- - - x") and flow collections together.
	MaxYAMLDepth = 100
	// MaxYAMLNodes bounds a file's nodes, counted before parsing: each
	// mapping entry twice (key and value), each sequence entry, flow
	// separator and collection once.
	MaxYAMLNodes = 200_000
	// MaxManifestNodes bounds the YAML nodes of what kustomize renders
	// for one component (its manifests/ directory, or a plugin's
	// output), counted as for MaxYAMLNodes. kustomize holds a node in
	// several kilobytes and takes quadratic time in a mapping's size: at
	// this bound a build peaks at 150 MB and 17 s; 60,000 ConfigMaps
	// took 872 MB.
	MaxManifestNodes = 20_000
)

// checkYAMLStructure refuses YAML nested deeper than MaxYAMLDepth or
// holding more than MaxYAMLNodes nodes (see there how they are counted).
// It scans the text once, in constant memory, following YAML's grammar as
// far as structure goes (indentation, sequence entries, flow collections,
// quoted and block scalars, comments); it does not parse: what it
// miscounts in a file that does not parse is refused by the parser after
// it, and a count it errs on is always too high, never too low.
func checkYAMLStructure(data []byte) (YAMLShape, error) {
	s := yamlScan{data: data}
	err := s.run()
	return YAMLShape{Nodes: s.nodes, Documents: s.docs, SecondDocument: s.second}, err
}

// YAMLShape is what the structure scan counted in a YAML stream.
type YAMLShape struct {
	// Nodes as MaxYAMLNodes counts them.
	Nodes int
	// Documents that hold something (a "---" with nothing after it
	// before the next one does not count).
	Documents int
	// SecondDocument is the line the second document starts on (its
	// "---"), when there is one.
	SecondDocument int
}

type yamlScan struct {
	data  []byte
	i     int
	nodes int
	// indents are the columns of the open block collections.
	indents []int
	// flow is the depth of open flow collections.
	flow int
	// lineStart is where the indentation of the current line ends, what
	// a count refused on it quotes.
	lineStart int
	// docs counts the documents with content; content is set once the
	// current one has some; marker is where the current one's "---" is.
	docs    int
	content bool
	marker  int
	second  int
}

// seen notes content in the current document.
func (s *yamlScan) seen() {
	if s.content {
		return
	}
	s.content = true
	s.docs++
	if s.docs == 2 {
		s.second, _ = text.Position(s.data, int64(s.marker))
	}
}

func (s *yamlScan) add(_, n int) error {
	s.nodes += n
	if s.nodes > MaxYAMLNodes {
		return structureError(s.data, s.lineStart, fmt.Sprintf("more than %d YAML nodes", MaxYAMLNodes))
	}
	return nil
}

func (s *yamlScan) deeper(at int) error {
	if len(s.indents)+s.flow > MaxYAMLDepth {
		return structureError(s.data, at, fmt.Sprintf("YAML nested deeper than %d levels", MaxYAMLDepth))
	}
	return nil
}

func (s *yamlScan) run() error {
	if err := s.add(0, 1); err != nil {
		return err
	}
	for s.i < len(s.data) {
		lineStart := s.i
		indent := 0
		for s.i < len(s.data) && s.data[s.i] == ' ' {
			s.i++
			indent++
		}
		s.lineStart = s.i
		if s.flow > 0 {
			if err := s.line(lineStart, indent); err != nil {
				return err
			}
			continue
		}
		if s.i >= len(s.data) || s.data[s.i] == '\n' || s.data[s.i] == '\r' || s.data[s.i] == '#' {
			s.skipLine()
			continue
		}
		if indent == 0 && (s.has("---") || s.has("...")) && (s.i+3 >= len(s.data) || blank(s.data[s.i+3])) {
			s.indents = s.indents[:0]
			s.content = false
			s.marker = s.i
			s.i += 3
			if err := s.add(lineStart, 1); err != nil {
				return err
			}
			if err := s.line(lineStart, indent); err != nil {
				return err
			}
			continue
		}
		for len(s.indents) > 0 && s.indents[len(s.indents)-1] > indent {
			s.indents = s.indents[:len(s.indents)-1]
		}
		if len(s.indents) == 0 || s.indents[len(s.indents)-1] < indent {
			s.indents = append(s.indents, indent)
			if err := s.deeper(s.i); err != nil {
				return err
			}
		}
		if err := s.line(lineStart, indent); err != nil {
			return err
		}
	}
	return nil
}

func (s *yamlScan) has(p string) bool {
	return len(s.data)-s.i >= len(p) && string(s.data[s.i:s.i+len(p)]) == p
}

func blank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// line scans the rest of a line (and the lines a quoted or block scalar
// starting on it runs over), s.i past its indentation.
func (s *yamlScan) line(lineStart, indent int) error {
	if j := s.i; s.flow > 0 || j < len(s.data) && !blank(s.data[j]) && s.data[j] != '#' {
		s.seen()
	} else {
		for j < len(s.data) && (s.data[j] == ' ' || s.data[j] == '\t') {
			j++
		}
		if j < len(s.data) && s.data[j] != '\n' && s.data[j] != '\r' && s.data[j] != '#' {
			s.seen()
		}
	}
	// Sequence entries and complex keys opening the line: each is a level.
	for s.flow == 0 && s.i < len(s.data) && (s.data[s.i] == '-' || s.data[s.i] == '?') &&
		(s.i+1 >= len(s.data) || blank(s.data[s.i+1])) {
		at := s.i
		if err := s.add(at, 1); err != nil {
			return err
		}
		s.i++
		for s.i < len(s.data) && (s.data[s.i] == ' ' || s.data[s.i] == '\t') {
			s.i++
		}
		if s.i < len(s.data) && s.data[s.i] != '\n' && s.data[s.i] != '\r' && s.data[s.i] != '#' {
			s.indents = append(s.indents, s.i-lineStart)
			if err := s.deeper(at); err != nil {
				return err
			}
		}
	}
	prevBlank := true
	for s.i < len(s.data) {
		c := s.data[s.i]
		at := s.i
		switch {
		case c == '\n' || c == '\r':
			s.i++
			return nil
		case c == '#' && prevBlank:
			s.skipLine()
			return nil
		case c == '"' || c == '\'':
			s.quoted(c)
		case c == '[' || c == '{':
			s.flow++
			s.i++
			if err := s.deeper(at); err != nil {
				return err
			}
			if err := s.add(at, 1); err != nil {
				return err
			}
		case c == ']' || c == '}':
			if s.flow > 0 {
				s.flow--
			}
			s.i++
		case c == ',' && s.flow > 0:
			s.i++
			if err := s.add(at, 1); err != nil {
				return err
			}
		case c == ':' && (s.flow > 0 || s.i+1 >= len(s.data) || blank(s.data[s.i+1])):
			s.i++
			if err := s.add(at, 2); err != nil {
				return err
			}
			if s.flow == 0 && s.blockScalar() {
				s.skipBlock(indent)
				return nil
			}
		case (c == '|' || c == '>') && prevBlank && s.flow == 0:
			// A block scalar as a sequence entry or a document.
			if s.blockScalarHere() {
				s.skipBlock(indent)
				return nil
			}
			s.i++
		default:
			s.i++
		}
		prevBlank = c == ' ' || c == '\t'
	}
	return nil
}

// quoted skips a quoted scalar, which may run over lines.
func (s *yamlScan) quoted(q byte) {
	s.i++
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '\\' && q == '"':
			s.i += 2
			continue
		case c == q && q == '\'' && s.i+1 < len(s.data) && s.data[s.i+1] == '\'':
			s.i += 2
			continue
		case c == q:
			s.i++
			return
		}
		s.i++
	}
}

// blockScalar reports whether a block scalar header ("|", ">-", "|2+")
// follows the mapping value indicator just passed.
func (s *yamlScan) blockScalar() bool {
	j := s.i
	for j < len(s.data) && (s.data[j] == ' ' || s.data[j] == '\t') {
		j++
	}
	if j >= len(s.data) || (s.data[j] != '|' && s.data[j] != '>') {
		return false
	}
	s.i = j
	return s.blockScalarHere()
}

// blockScalarHere reports whether s.i is at a block scalar header, the
// rest of its line indicators and a comment at most; when it is, s.i is
// left at the line's end.
func (s *yamlScan) blockScalarHere() bool {
	j := s.i + 1
	for j < len(s.data) && (s.data[j] == '-' || s.data[j] == '+' || s.data[j] >= '1' && s.data[j] <= '9') {
		j++
	}
	for j < len(s.data) && (s.data[j] == ' ' || s.data[j] == '\t') {
		j++
	}
	if j < len(s.data) && s.data[j] != '\n' && s.data[j] != '\r' && s.data[j] != '#' {
		return false
	}
	s.i = j
	return true
}

// skipBlock skips the rest of the line and the block scalar's content:
// the lines after it that are blank or indented more than indent.
func (s *yamlScan) skipBlock(indent int) {
	s.skipLine()
	for s.i < len(s.data) {
		j, col := s.i, 0
		for j < len(s.data) && s.data[j] == ' ' {
			j++
			col++
		}
		if j < len(s.data) && s.data[j] != '\n' && s.data[j] != '\r' && col <= indent {
			return
		}
		s.i = j
		s.skipLine()
	}
}

func (s *yamlScan) skipLine() {
	for s.i < len(s.data) && s.data[s.i] != '\n' {
		s.i++
	}
	if s.i < len(s.data) {
		s.i++
	}
}
