package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

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

func TestAnd(t *testing.T) {
	for _, tc := range []struct {
		items []string
		want  string
	}{
		{nil, ""},
		{[]string{"profiles"}, "profiles"},
		{[]string{"profiles", "arches"}, "profiles and arches"},
		{[]string{"profiles", "arches", "release_dirs"}, "profiles, arches and release_dirs"},
	} {
		if got := And(tc.items); got != tc.want {
			t.Errorf("And(%q) = %q, want %q", tc.items, got, tc.want)
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
		// Invalid UTF-8 is no control character.
		if want := tc.in != tc.want && !strings.Contains(tc.in, "\xff"); HasControl(tc.in) != want {
			t.Errorf("HasControl(%q) = %t, want %t", tc.in, HasControl(tc.in), want)
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
		if HasControl(s) && !HasUnsafe(s) {
			t.Fatalf("HasControl(%q) without HasUnsafe", s)
		}
		if HasUnsafe(s) && !HasControl(s) && utf8.ValidString(s) {
			t.Fatalf("HasUnsafe(%q), valid UTF-8, without HasControl", s)
		}
		if !HasUnsafe(s) && out != s {
			t.Fatalf("Escape changed safe text %q to %q", s, out)
		}
	})
}

func TestCodeSpan(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"quay.io/a@sha256:abc", "`quay.io/a@sha256:abc`"},
		{"a`b", "``a`b``"},
		{"`<!-- hidden", "`` `<!-- hidden ``"},
		{"a``b`", "``` a``b` ```"},
		{" x", "`  x `"},
		{"", "` `"},
		{"line\nbreak", "`line\\x0abreak`"},
	} {
		if got := CodeSpan(tc.in); got != tc.want {
			t.Errorf("CodeSpan(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := CodeCell("a|b`"); got != "`` a\\|b` ``" {
		t.Errorf("CodeCell = %q", got)
	}
}

func TestMarkdownText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"storage-lvms", "storage-lvms"},
		{"<!-- rest hidden", `\<!-- rest hidden`},
		{"[click](https://evil)", `\[click\](https://evil)`},
		{"<details><summary>x", `\<details\>\<summary\>x`},
		{"`code` *b* _i_ ~s~ a|b &amp; \\", "\\`code\\` \\*b\\* \\_i\\_ \\~s\\~ a\\|b \\&amp; \\\\"},
		{"a\nb", `a\\x0ab`},
	} {
		if got := MarkdownText(tc.in); got != tc.want {
			t.Errorf("MarkdownText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzMarkdown: a code span's content is the value (escaped as Escape
// does) and no run of backticks in it is as long as the fence, so nothing
// closes the span early; MarkdownText leaves no markup character without
// its backslash.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"a`b", "``", " ` ", "<!--", "[x](y)", "\\`", "\n|"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		span := CodeSpan(s)
		n := 0
		for n < len(span) && span[n] == '`' {
			n++
		}
		if n == 0 || !strings.HasSuffix(span, strings.Repeat("`", n)) || len(span) < 2*n {
			t.Fatalf("CodeSpan(%q) = %q: not fenced", s, span)
		}
		content := span[n : len(span)-n]
		if strings.HasPrefix(content, " ") && strings.HasSuffix(content, " ") && strings.Trim(content, " ") != "" {
			content = content[1 : len(content)-1]
		}
		want := Escape(s)
		if want == "" {
			want = " "
		}
		if content != want {
			t.Fatalf("CodeSpan(%q) shows %q, want %q", s, content, want)
		}
		for _, run := range strings.FieldsFunc(content, func(r rune) bool { return r != '`' }) {
			if len(run) == n {
				t.Fatalf("CodeSpan(%q) = %q: a run of %d backticks closes it", s, span, n)
			}
		}
		text := MarkdownText(s)
		for i := 0; i < len(text); i++ {
			if text[i] == '\\' {
				i++ // the escaped character
				continue
			}
			if strings.IndexByte(markdownSpecial, text[i]) >= 0 {
				t.Fatalf("MarkdownText(%q) = %q: %q at %d unescaped", s, text, text[i], i)
			}
		}
	})
}
