package mantext_test

import (
	"strings"
	"testing"

	"github.com/russross/blackfriday/v2"

	"github.com/microshift-compose/microshift-compose/internal/mantext"
)

// md2manExtensions are the Markdown extensions go-md2man parses with
// (md2man's roffRenderer.GetExtensions): the tests read Block's output as
// the man page generator does.
const md2manExtensions = blackfriday.NoIntraEmphasis | blackfriday.Tables | blackfriday.FencedCode |
	blackfriday.SpaceHeadings | blackfriday.Footnotes | blackfriday.Titleblock | blackfriday.DefinitionLists

// part is a paragraph (its lines joined by "\n") or a code block as the
// Markdown parser sees it.
type part struct {
	code bool
	text string
}

// parse reads md as go-md2man does, after a heading as cobra/doc puts
// the description after "# DESCRIPTION", and returns its paragraphs and
// code blocks; any other node (a tag, an emphasis, a list, a heading...)
// is an error.
func parse(t *testing.T, md string) []part {
	t.Helper()
	doc := blackfriday.New(blackfriday.WithExtensions(md2manExtensions)).Parse([]byte("# DESCRIPTION\n" + md + "\n"))
	var parts []part
	var bad []string
	doc.Walk(func(n *blackfriday.Node, entering bool) blackfriday.WalkStatus {
		if !entering {
			return blackfriday.GoToNext
		}
		switch n.Type {
		case blackfriday.Document:
		case blackfriday.Heading:
			if string(n.FirstChild.Literal) != "DESCRIPTION" {
				bad = append(bad, "heading "+string(n.FirstChild.Literal))
			}
			return blackfriday.SkipChildren
		case blackfriday.Paragraph:
			parts = append(parts, part{})
		case blackfriday.Text:
			parts[len(parts)-1].text += string(n.Literal)
		case blackfriday.Softbreak:
			parts[len(parts)-1].text += "\n"
		case blackfriday.CodeBlock:
			parts = append(parts, part{code: true, text: strings.TrimSuffix(string(n.Literal), "\n")})
		default:
			bad = append(bad, n.Type.String()+" "+string(n.Literal))
		}
		return blackfriday.GoToNext
	})
	if len(bad) > 0 {
		t.Errorf("Markdown %q has nodes a plain text must not make: %q", md, bad)
	}
	return parts
}

// want is what the parser must see for text: each blank-line-separated
// run of margin lines a paragraph, each run of indented lines (or lines of
// '=' alone, or starting with '%') a code block, every character kept.
func want(text string) []part {
	var parts []part
	prev := -1 // kind of the previous line: -1 blank, 0 prose, 1 code
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, " \t")
		kind := 0
		switch {
		case l == "":
			prev = -1
			continue
		case l[0] == ' ' || l[0] == '\t' || l[0] == '%' || strings.Trim(l, "=") == "":
			kind = 1
		}
		if kind == prev {
			parts[len(parts)-1].text += "\n" + l
		} else {
			parts = append(parts, part{code: kind == 1, text: l})
		}
		prev = kind
	}
	return parts
}

func TestBlock(t *testing.T) {
	for _, tc := range []struct {
		name, text string
	}{
		{"placeholders", "mirror --to dir:<output>/images writes DIR/<release>-<profile>-<arch>/"},
		{"emphasis and globs", "*.yaml and _id_ and **bold** and ~~gone~~ and `code`"},
		{"list markers", "- not a list\n+ nor this\n* nor this\n1. nor this\n2) nor this"},
		{"headings and rules", "# not a heading\n---\n***\n___"},
		{"setext underline", "Title\n===\ntext"},
		{"title block", "  code\n%post runs\n\n%0 also"},
		{"quote table definition", "> not a quote\na | b\n--- | ---\nterm\n: not a definition"},
		{"links and entities", "[text](http://x) ![img](y) &amp; &#60; [^1] <http://auto> <b>tag</b>"},
		{"roff controls", ".TH at the start\n'quote at the start\nback\\slash and \\fBfont\\fP"},
		{"preformatted", "files:\n\n  blueprint.toml      osbuild blueprint <x>\n  .dot   \\ back\n\t'tab\n\nafter"},
		{"backticks in a block", "  ```\n  ````code\nprose"},
		{"trailing spaces", "two spaces  \nnext"},
		{"cobra's completion help", "To load completions:\n\n\tsource <(microshift-compose completion bash)\n\n#### Linux:\n\n\tmicroshift-compose completion bash > /etc/bash_completion.d/microshift-compose\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parse(t, mantext.Block(tc.text))
			w := want(tc.text)
			if len(got) != len(w) {
				t.Fatalf("Block(%q) parses as %+v, want %+v", tc.text, got, w)
			}
			for i := range w {
				if got[i] != w[i] {
					t.Errorf("Block(%q) part %d = %+v, want %+v", tc.text, i, got[i], w[i])
				}
			}
		})
	}
}

func TestInline(t *testing.T) {
	for _, s := range []string{
		"place the key at /etc/containers/sigstore/<name>.pub",
		"default topolvm-provisioner-<class>, xfs; repeat per class",
		"- a leading dash, *stars*, _under_ [brackets] (parens) # hash | pipe & amp ~ tilde",
	} {
		got := parse(t, mantext.Inline(s))
		if len(got) != 1 || got[0].code || got[0].text != s {
			t.Errorf("Inline(%q) parses as %+v", s, got)
		}
	}
}

// FuzzBlock: whatever plain text a help holds, go-md2man's parser reads
// Block's Markdown as the same characters in the same paragraphs and
// blocks, and as nothing else.
func FuzzBlock(f *testing.F) {
	for _, s := range []string{
		"a <b> c", "  x\n\ny", "===\n", "- a\n- b", "1. x", "`x`", "[a](b)", "\\", "a\n  ```\nb", "&lt;", "<!-- c -->",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range s {
			// Help text is printable; the parser turns NUL and
			// other controls into replacement characters.
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || r == '\r' || r >= 0x80 {
				t.Skip()
			}
		}
		got := parse(t, mantext.Block(s))
		w := want(s)
		if len(got) != len(w) {
			t.Fatalf("Block(%q) parses as %+v, want %+v", s, got, w)
		}
		for i := range w {
			if got[i] != w[i] {
				t.Fatalf("Block(%q) part %d = %+v, want %+v", s, i, got[i], w[i])
			}
		}
	})
}

func TestRoff(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain .TH \"X\"\n", "plain .TH \"X\"\n"},
		{"quay.io/x@sha256:…", `quay.io/x@sha256:\[u2026]`},
		{"a → b — c", `a \[u2192] b \[u2014] c`},
		{"😀", `\[u1F600]`},
		{"", ""},
	} {
		if got := string(mantext.Roff([]byte(tc.in))); got != tc.want {
			t.Errorf("Roff(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
