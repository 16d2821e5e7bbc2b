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

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünïcode ✓", "plain text, ünïcode ✓"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"bell\a and del\x7f", `bell\x07 and del\x7f`},
		{"a\nb\r\tc", `a\x0ab\x0d\x09c`},
		{"c1 \u0085 \u009b", `c1 \u0085 \u009b`},
		{"bidi \u202eevil\u202c", `bidi \u202eevil\u202c`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad \xff utf8", `bad \xff utf8`},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if HasUnsafe(tc.in) != (tc.in != tc.want) {
			t.Errorf("HasUnsafe(%q) = %t", tc.in, HasUnsafe(tc.in))
		}
	}
}

func FuzzEscape(f *testing.F) {
	f.Add("\x1b[2J\u202e\xff")
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		if HasUnsafe(out) {
			t.Fatalf("Escape(%q) = %q still holds unsafe characters", s, out)
		}
		if !HasUnsafe(s) && out != s {
			t.Fatalf("Escape changed safe text %q to %q", s, out)
		}
	})
}
