package inputfile

import (
	"fmt"
)

// TOML structure limits (see the package doc). The TOML decoder's memory
// grows with every key times the depth of its path (each key stores its
// whole path, and every level of an inline table or dotted key is a table
// of its own): a 40 KB catalog.toml of nested inline tables took 4 GB, a
// 20 KB dotted key 1.4 GB. Real catalogs nest 8 levels at most and hold a
// few thousand keys.
const (
	// MaxTOMLDepth bounds how deep a value sits: the parts of its table
	// header, of its dotted key, and each inline table or array around it.
	MaxTOMLDepth = 32
	// MaxTOMLValues bounds a file's keys and array elements, a key
	// counted once per part of its full path: under [a.b], c.d = 1
	// counts 4.
	MaxTOMLValues = 100_000
)

// CheckTOML refuses TOML nested deeper than MaxTOMLDepth or holding more
// than MaxTOMLValues keys and values, before any decoder reads it. It
// scans the text once, in constant memory, following TOML's grammar as
// far as structure goes (strings, comments, keys, tables, arrays, inline
// tables); it does not decode values or check syntax: what does not parse
// is left to the decoder, which reports it in its own words, and cannot
// have cost more than this scan counted up to that point.
func CheckTOML(data []byte) error {
	s := tomlScan{data: data}
	return s.document()
}

type tomlScan struct {
	data   []byte
	i      int
	values int
	// header is the depth of the current table header's path.
	header int
}

func (s *tomlScan) document() error {
	for {
		s.skipSpace(true)
		if s.i >= len(s.data) {
			return nil
		}
		start := s.i
		if s.data[s.i] == '[' {
			s.i++
			array := s.i < len(s.data) && s.data[s.i] == '['
			if array {
				s.i++
			}
			n := s.key()
			if array {
				n++ // an element of an array of tables
			}
			s.header = n
			if err := s.count(start, n, n); err != nil {
				return err
			}
			for s.i < len(s.data) && s.data[s.i] == ']' {
				s.i++
			}
			continue
		}
		n := s.key()
		if n == 0 {
			s.i++ // not a key: the decoder refuses it; go on counting
			continue
		}
		depth := s.header + n
		if err := s.count(start, depth, depth); err != nil {
			return err
		}
		s.skipSpace(false)
		if s.i < len(s.data) && s.data[s.i] == '=' {
			s.i++
		}
		if err := s.value(depth); err != nil {
			return err
		}
	}
}

// count adds cost values at the given depth, the construct starting at
// start.
func (s *tomlScan) count(start, depth, cost int) error {
	if depth > MaxTOMLDepth {
		return s.refuse(start, fmt.Sprintf("nesting deeper than %d levels (table header, dotted key, inline tables and arrays)", MaxTOMLDepth))
	}
	s.values += cost
	if s.values > MaxTOMLValues {
		return s.refuse(start, fmt.Sprintf("more than %d keys and values (each key counted once per part of its path)", MaxTOMLValues))
	}
	return nil
}

func (s *tomlScan) refuse(at int, what string) error { return structureError(s.data, at, what) }

// value skips one value at depth (the depth of its key), counting what
// its arrays and inline tables hold.
func (s *tomlScan) value(depth int) error {
	s.skipSpace(false)
	if s.i >= len(s.data) {
		return nil
	}
	start := s.i
	switch s.data[s.i] {
	case '"', '\'':
		s.str()
	case '[':
		s.i++
		if err := s.count(start, depth+1, 0); err != nil {
			return err
		}
		for {
			s.skipSpace(true)
			if s.i >= len(s.data) {
				return nil
			}
			if c := s.data[s.i]; c == ']' {
				s.i++
				return nil
			} else if c == ',' {
				s.i++ // a stray comma: the decoder refuses it
				continue
			}
			at := s.i
			if err := s.count(at, depth+1, 1); err != nil {
				return err
			}
			if err := s.value(depth + 1); err != nil {
				return err
			}
			if s.i == at {
				s.i++ // nothing a value starts with
			}
		}
	case '{':
		s.i++
		if err := s.count(start, depth+1, 0); err != nil {
			return err
		}
		for {
			s.skipSpace(true)
			if s.i >= len(s.data) {
				return nil
			}
			switch s.data[s.i] {
			case '}':
				s.i++
				return nil
			case ',':
				s.i++
				continue
			}
			at := s.i
			n := s.key()
			if n == 0 {
				s.i++
				continue
			}
			if err := s.count(at, depth+n, depth+n); err != nil {
				return err
			}
			s.skipSpace(false)
			if s.i < len(s.data) && s.data[s.i] == '=' {
				s.i++
			}
			if err := s.value(depth + n); err != nil {
				return err
			}
		}
	default:
		// A number, boolean or date-time (which may hold a space): up to
		// what ends a value.
		for s.i < len(s.data) {
			switch s.data[s.i] {
			case ',', ']', '}', '#', '\n', '\r', '[', '{', '"', '\'':
				return nil
			}
			s.i++
		}
	}
	return nil
}

// key skips a (dotted) key or table header path and returns how many parts
// it has; 0 when there is none here.
func (s *tomlScan) key() int {
	n := 0
	for {
		s.skipSpace(false)
		if s.i >= len(s.data) {
			return n
		}
		switch c := s.data[s.i]; {
		case c == '"' || c == '\'':
			s.str()
		case bareKey(c):
			for s.i < len(s.data) && bareKey(s.data[s.i]) {
				s.i++
			}
		default:
			return n
		}
		n++
		s.skipSpace(false)
		if s.i >= len(s.data) || s.data[s.i] != '.' {
			return n
		}
		s.i++
	}
}

func bareKey(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// str skips a string of any of TOML's four kinds, s.i at its first quote.
func (s *tomlScan) str() {
	q := s.data[s.i]
	if s.i+2 < len(s.data) && s.data[s.i+1] == q && s.data[s.i+2] == q {
		s.i += 3
		for s.i < len(s.data) {
			c := s.data[s.i]
			if c == '\\' && q == '"' {
				s.i += 2
				continue
			}
			if c == q && s.i+2 < len(s.data) && s.data[s.i+1] == q && s.data[s.i+2] == q {
				s.i += 3
				// Up to two more quotes belong to the string.
				for k := 0; k < 2 && s.i < len(s.data) && s.data[s.i] == q; k++ {
					s.i++
				}
				return
			}
			s.i++
		}
		return
	}
	s.i++
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '\\' && q == '"':
			s.i += 2
			continue
		case c == q:
			s.i++
			return
		case c == '\n':
			return // unterminated: the decoder refuses it
		}
		s.i++
	}
}

// skipSpace skips blanks and comments, and newlines too when newlines is
// set (between statements, inside arrays and inline tables).
func (s *tomlScan) skipSpace(newlines bool) {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t':
		case '\n', '\r':
			if !newlines {
				return
			}
		case '#':
			for s.i < len(s.data) && s.data[s.i] != '\n' {
				s.i++
			}
			continue
		default:
			return
		}
		s.i++
	}
}
