// Package text holds the small string helpers the parsers and reports
// share: messages kept on one line, control characters escaped, byte
// offsets turned into line and column, and singular/plural words.
package text

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// OneLine keeps a message on one line: runs of whitespace, newlines
// included, become one space.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Position converts a byte offset into data to a 1-based line and column.
func Position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// Plural returns one when n is 1, many otherwise.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// And joins items as a sentence lists them: "a", "a and b", "a, b and
// c".
func And(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// Escape makes text safe to print on a terminal or to write into one line
// of a generated file: control characters (C0, DEL, C1), invalid UTF-8,
// line and paragraph separators, and format characters that reorder or
// hide text (bidi overrides, zero-width marks) are written as Go escapes
// (\x1b, \u202e), so that what reaches the screen or the file is what
// the value says, never an instruction to the terminal or a new line.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return true
			}
		}
		if unsafeRune(r) {
			return true
		}
	}
	return false
}

// unsafeRune reports whether r must not reach a terminal or a line of a
// generated file as is.
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// HasUnsafe reports whether s holds a character Escape would escape: what
// validation refuses in paths and names that reach generated files.
func HasUnsafe(s string) bool { return needsEscape(s) }

// HasControl reports whether s holds a control, line or paragraph
// separator or format character: what HasUnsafe reports but for invalid
// UTF-8, which a file name may hold (Escape prints its bytes).
func HasControl(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				continue
			}
		}
		if unsafeRune(r) {
			return true
		}
	}
	return false
}

// Cell makes s safe in a Markdown table cell: escaped (Escape), and its
// pipes, which would start a new cell, backslash-escaped.
func Cell(s string) string { return strings.ReplaceAll(Escape(s), "|", `\|`) }

// MaxExcerpt is how many bytes of a value Excerpt keeps.
const MaxExcerpt = 64

// Excerpt shortens a value quoted in a message to at most MaxExcerpt
// bytes of it (cut at a character boundary), escaped as Escape does,
// followed by "... (N bytes)" when it was cut: a 20 KB key is named, not
// repeated.
func Excerpt(s string) string {
	if len(s) <= MaxExcerpt {
		return Escape(s)
	}
	cut := MaxExcerpt
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", Escape(s[:cut]), len(s))
}

// QuoteExcerpt is Excerpt in double quotes, as %q would quote a short
// value: "abc", or "aaaa..." (20480 bytes).
func QuoteExcerpt(s string) string {
	if len(s) <= MaxExcerpt {
		return fmt.Sprintf("%q", s)
	}
	cut := MaxExcerpt
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
}

// CodeSpan returns s as a CommonMark code span that shows s as it is,
// whatever it holds: delimited by one backtick more than the longest run
// of backticks in s (so no backtick in s closes it), padded with a space
// on each side when s starts or ends with a backtick or a space (CommonMark
// strips one space from each side of such content), control characters
// escaped (Escape). Inside a code span, links, HTML (<details>, <!--) and
// emphasis are text. An empty s is "` `".
func CodeSpan(s string) string {
	s = Escape(s)
	if s == "" {
		return "` `"
	}
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	// Content of spaces only is shown as it is; other content that
	// starts or ends with a space loses one on each side.
	if strings.Trim(s, " ") != "" && (s[0] == '`' || s[0] == ' ' || s[len(s)-1] == '`' || s[len(s)-1] == ' ') {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// CodeCell is CodeSpan for a cell of a GFM table: "|" is escaped as "\|",
// which the table takes out before the code span is read.
func CodeCell(s string) string { return strings.ReplaceAll(CodeSpan(s), "|", `\|`) }

// markdownSpecial are the ASCII punctuation characters that can start
// inline Markdown in text: code spans, emphasis, links and images, raw
// HTML and comments, entities, table cells, escapes, strikethrough.
const markdownSpecial = "\\`*_[]<>&|~"

// MarkdownText escapes s for Markdown text outside code spans: control
// characters as Escape does, and each of \ ` * _ [ ] < > & | ~ with a
// backslash (CommonMark shows an escaped punctuation character as
// itself), so a value cannot open a link, a code span, an HTML tag or an
// HTML comment that hides the rest of a pull request's description.
func MarkdownText(s string) string {
	s = Escape(s)
	if !strings.ContainsAny(s, markdownSpecial) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(markdownSpecial, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ConfigValue shows a config value in a message: JSON for a scalar or a
// list, "a mapping" for a mapping (its leaves are named one by one).
func ConfigValue(v any) string {
	if _, ok := v.(map[string]any); ok {
		return "a mapping"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
