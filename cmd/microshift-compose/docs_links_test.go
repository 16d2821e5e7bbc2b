package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// maxFrontPageLines bounds README.md: a front page that says what the tool
// is, how to install and start it, and where each guide under docs/ is.
const maxFrontPageLines = 600

// guides returns the Markdown guides under docs/ (docs/*.md), as paths
// relative to the repository root.
func guides(t *testing.T, root string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(found) == 0 {
		t.Fatalf("no guides in %s/docs (%v)", root, err)
	}
	var out []string
	for _, f := range found {
		out = append(out, "docs/"+filepath.Base(f))
	}
	return out
}

// frontPageProblems says how README.md (readme, its text) fails as a front
// page: longer than maxFrontPageLines, or a guide it does not link.
func frontPageProblems(readme string, guides []string) []string {
	var problems []string
	if n := strings.Count(strings.TrimSuffix(readme, "\n"), "\n") + 1; n > maxFrontPageLines {
		problems = append(problems, fmt.Sprintf("README.md has %d lines, more than a front page's %d: move the detail into a guide under docs/", n, maxFrontPageLines))
	}
	linked := map[string]bool{}
	for _, l := range markdownLinks(readme) {
		p, _, _ := strings.Cut(l.target, "#")
		linked[path.Clean(p)] = true
	}
	for _, g := range guides {
		if !linked[g] {
			problems = append(problems, fmt.Sprintf("README.md does not link %s: add it to \"Where to read on\"", g))
		}
	}
	return problems
}

// TestDocsFrontPage holds README.md to a front page: at most
// maxFrontPageLines lines, linking every guide under docs/.
func TestDocsFrontPage(t *testing.T) {
	root := root(t)
	for _, p := range frontPageProblems(string(mustReadFile(t, filepath.Join(root, "README.md"))), guides(t, root)) {
		t.Error(p)
	}
}

// link is a Markdown inline link: its target as written and its line.
type link struct {
	target string
	line   int
}

// inlineLink matches an inline link or image, [text](target) or
// [text](target "title"); the text may span lines.
var inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// markdownLinks returns the inline links of text outside fenced code
// blocks and code spans.
func markdownLinks(text string) []link {
	var out []link
	for i, line := range proseLines(text) {
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{target: m[1], line: i + 1})
		}
	}
	return out
}

// codeSpan matches an inline code span of one line.
var codeSpan = regexp.MustCompile("(`+)[^`]*?(`+)")

// proseLines returns text's lines with fenced code blocks blanked and code
// spans removed, so that neither a link nor a heading is found in code.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " \t")
		marker := ""
		for _, c := range []string{"```", "~~~"} {
			if strings.HasPrefix(trimmed, c) {
				marker = trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, c[:1]))]
			}
		}
		switch {
		case fence == "" && marker != "":
			fence, lines[i] = marker, ""
		case fence != "":
			if marker != "" && marker[0] == fence[0] && len(marker) >= len(fence) && strings.TrimSpace(trimmed[len(marker):]) == "" {
				fence = ""
			}
			lines[i] = ""
		default:
			lines[i] = codeSpan.ReplaceAllStringFunc(line, func(s string) string {
				// A span is only one whose fences are of one length; keep the
				// link text of [`code`](target).
				m := codeSpan.FindStringSubmatch(s)
				if len(m[1]) != len(m[2]) {
					return s
				}
				return "``"
			})
		}
	}
	return lines
}

// atxHeading matches an ATX heading and its text.
var atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$`)

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown text: the heading's text in lower case, without punctuation but
// for - and _, spaces as -, and -1, -2... after the second of a name.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	lines := strings.Split(text, "\n")
	fence := proseLinesFences(text)
	for i, line := range lines {
		if fence[i] {
			continue
		}
		m := atxHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := anchor(m[1])
		name := a
		for n := 1; anchors[name]; n++ {
			name = fmt.Sprintf("%s-%d", a, n)
		}
		anchors[name] = true
	}
	return anchors
}

// proseLinesFences says which of text's lines are inside fenced code
// blocks (fences included).
func proseLinesFences(text string) []bool {
	lines := strings.Split(text, "\n")
	blanked := proseLines(text)
	out := make([]bool, len(lines))
	for i := range lines {
		out[i] = blanked[i] == "" && strings.TrimSpace(lines[i]) != ""
	}
	return out
}

// anchor is GitHub's anchor of a heading's text.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-', r == '_', unicode.IsLetter(r), unicode.IsDigit(r), unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// linkProblems checks the relative links of the Markdown files docs (paths
// relative to root, with /): each must name a file or directory that
// exists, and an #anchor (in the same file or another .md) a heading of
// that file.
func linkProblems(root string, docs []string) []string {
	var problems []string
	anchors := map[string]map[string]bool{}
	anchorsOf := func(doc string) (map[string]bool, error) {
		if a, ok := anchors[doc]; ok {
			return a, nil
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(doc)))
		if err != nil {
			return nil, err
		}
		anchors[doc] = headingAnchors(string(data))
		return anchors[doc], nil
	}
	for _, doc := range docs {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(doc)))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, l := range markdownLinks(string(data)) {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			p, frag, hasFrag := strings.Cut(l.target, "#")
			target := doc
			if p != "" {
				target = path.Join(path.Dir(doc), p)
				if strings.HasPrefix(target, "../") || path.IsAbs(p) {
					problems = append(problems, fmt.Sprintf("%s:%d: link %q leaves the repository", doc, l.line, l.target))
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
					problems = append(problems, fmt.Sprintf("%s:%d: link %q: %s does not exist", doc, l.line, l.target, target))
					continue
				}
			}
			if !hasFrag {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				problems = append(problems, fmt.Sprintf("%s:%d: link %q: an anchor into %s, which is no Markdown file", doc, l.line, l.target, target))
				continue
			}
			a, err := anchorsOf(target)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			if !a[frag] {
				problems = append(problems, fmt.Sprintf("%s:%d: link %q: %s has no heading with anchor #%s", doc, l.line, l.target, target, frag))
			}
		}
	}
	slices.Sort(problems)
	return problems
}

// TestDocsLinks checks every relative link of README.md and the guides
// under docs/: the file it names exists, and its #anchor is a heading of
// that file, as GitHub makes anchors.
func TestDocsLinks(t *testing.T) {
	root := root(t)
	for _, p := range linkProblems(root, append([]string{"README.md"}, guides(t, root)...)) {
		t.Error(p)
	}
}

// TestDocsLinkChecks shows the two checks refusing what they are for, on
// files of their own: a front page too long or missing a guide, a link to
// no file, an anchor no heading has (in the file and in another), an
// anchor into a file that is not Markdown; and taking what GitHub renders.
func TestDocsLinkChecks(t *testing.T) {
	long := strings.Repeat("line\n", maxFrontPageLines+1)
	tests := []struct {
		name, readme string
		want         []string
	}{
		{"short and linking both", "# x\n[a](docs/a.md) and [b](docs/b.md#b)\n", nil},
		{"a guide not linked", "# x\n[a](docs/a.md)\n`[b](docs/b.md)` in code\n", []string{"README.md does not link docs/b.md"}},
		{"too long", "[a](docs/a.md) [b](docs/b.md)\n" + long, []string{fmt.Sprintf("README.md has %d lines", maxFrontPageLines+2)}},
		{"a link in a fence", "[a](docs/a.md)\n```sh\n[b](docs/b.md)\n```\n", []string{"does not link docs/b.md"}},
	}
	for _, tc := range tests {
		t.Run("front page/"+tc.name, func(t *testing.T) {
			got := frontPageProblems(tc.readme, []string{"docs/a.md", "docs/b.md"})
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %q, want it to say %q", got[i], w)
				}
			}
		})
	}

	root := t.TempDir()
	for name, text := range map[string]string{
		"README.md": "# Tool\n\nSee [Signed compositions](docs/a.md#signed-compositions-build---sign-key-verify),\n" +
			"[the schema](docs/s.json), [the second Setup](docs/a.md#setup-1), [here](#tool),\n" +
			"[Installing\ndevices](docs/a.md#installing-devices) and [GitHub](https://github.com/x#y).\n",
		"docs/a.md": "# A\n\n## Signed compositions: `build --sign-key`, `verify`\n\n## Setup\n\n## Setup\n\n" +
			"```sh\n# Only in code\n```\n\n## Installing devices\n\n[up](../README.md#tool) [examples](../examples/x.toml)\n",
		"docs/b.md":        "# B\n\n[gone](a.md#nothing) [missing](c.md) [self](#b) [selfgone](#a)\n[schema](s.json#k) [out](../../x.md) [code](a.md#only-in-code)\n",
		"docs/s.json":      "{}\n",
		"examples/x.toml":  "",
		"docs/ignored.txt": "[not checked](nowhere.md)\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := linkProblems(root, []string{"README.md", "docs/a.md"}); len(got) != 0 {
		t.Errorf("links that resolve are refused: %q", got)
	}
	got := linkProblems(root, []string{"docs/b.md"})
	want := []string{
		`docs/b.md:3: link "a.md#nothing": docs/a.md has no heading with anchor #nothing`,
		`docs/b.md:3: link "#a": docs/b.md has no heading with anchor #a`,
		`docs/b.md:3: link "c.md": docs/c.md does not exist`,
		`docs/b.md:4: link "../../x.md" leaves the repository`,
		`docs/b.md:4: link "s.json#k": an anchor into docs/s.json, which is no Markdown file`,
		`docs/b.md:4: link "a.md#only-in-code": docs/a.md has no heading with anchor #only-in-code`,
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems of docs/b.md:\n got %q\nwant %q", got, want)
	}
}
