package text

import "testing"

func TestOneLine(t *testing.T) {
	if got := OneLine(" a\n b\t\tc  "); got != "a b c" {
		t.Errorf("OneLine = %q, want %q", got, "a b c")
	}
}

func TestPosition(t *testing.T) {
	data := []byte("ab\ncd\n")
	for _, tc := range []struct {
		offset    int64
		line, col int
	}{{0, 1, 1}, {1, 1, 2}, {3, 2, 1}, {4, 2, 2}, {6, 3, 1}, {99, 3, 1}, {-5, 1, 1}} {
		if l, c := Position(data, tc.offset); l != tc.line || c != tc.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", tc.offset, l, c, tc.line, tc.col)
		}
	}
}

func TestPlural(t *testing.T) {
	if Plural(1, "image", "images") != "image" || Plural(0, "image", "images") != "images" || Plural(2, "image", "images") != "images" {
		t.Error("Plural chose the wrong form")
	}
}
