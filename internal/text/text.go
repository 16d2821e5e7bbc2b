// Package text holds the small string helpers the parsers and reports
// share: messages kept on one line, byte offsets turned into line and
// column, and singular/plural words.
package text

import (
	"bytes"
	"strings"
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
