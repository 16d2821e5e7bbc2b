package mantext

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// markdownPunct are the characters Markdown (blackfriday, go-md2man's
// parser) gives meaning to and accepts a backslash before: each is escaped
// wherever it stands, so that none starts a tag, an emphasis, a list, a
// heading, a table or a link.
const markdownPunct = "\\`*_{}[]()#+-.!:|&<>~"

// Inline escapes one paragraph of plain text (a flag's usage, a command's
// short description): the words keep their characters, and the man page
// fills them into lines as it does any paragraph.
func Inline(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && strings.ContainsRune(markdownPunct, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Block turns help text of several paragraphs into Markdown: lines that
// start at the margin are prose, escaped and filled by the man page; runs
// of lines that start with a space or a tab are preformatted (tables,
// commands, JSON), kept as they are, each run in a fenced code block. A
// blank line ends either.
func Block(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var out []string
	var pre []string
	flush := func() {
		if len(pre) == 0 {
			return
		}
		fence := codeFence(pre)
		out = append(out, "", fence)
		out = append(out, pre...)
		out = append(out, fence, "")
		pre = nil
	}
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		switch {
		case l == "":
			flush()
			out = append(out, "")
		case l[0] == ' ' || l[0] == '\t' || l[0] == '%' || strings.Trim(l, "=") == "":
			// A line of '=' alone would underline the line above
			// into a heading, and one starting with '%' can start a
			// title block; neither character takes a backslash, so
			// such lines are kept as they are, like indented ones.
			pre = append(pre, l)
		default:
			flush()
			out = append(out, Inline(l))
		}
	}
	flush()
	return strings.Join(squeezeBlank(out), "\n")
}

// codeFence is a backtick fence longer than any run of backticks in the
// block, so that no line of it closes the block early.
func codeFence(lines []string) string {
	longest := 0
	for _, l := range lines {
		run := 0
		for _, r := range l {
			if r == '`' {
				run++
				longest = max(longest, run)
			} else {
				run = 0
			}
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// squeezeBlank drops blank lines at either end and keeps one of several.
func squeezeBlank(lines []string) []string {
	var out []string
	for _, l := range lines {
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// Roff spells every character outside ASCII in a roff document as groff's
// Unicode escape (\[u2026] for …): roff input is ASCII to troff, which
// warns of and drops other bytes unless a preprocessor (man's preconv)
// ran first, and a man page is also read by tools that run none.
func Roff(doc []byte) []byte {
	if !slices.ContainsFunc(doc, func(c byte) bool { return c >= 0x80 }) {
		return doc
	}
	var b bytes.Buffer
	for _, r := range string(doc) {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, `\[u%04X]`, r)
	}
	return b.Bytes()
}
