package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"

	"github.com/microshift-compose/microshift-compose/internal/mantext"
)

// The man pages are generated here, like docs/cli, so that cobra/doc stays
// out of the binary: `make man` runs TestManPages with -man-dir and
// -man-version.
var (
	manDir     = flag.String("man-dir", "", "write the man pages (section 1) of every command into this directory (make man)")
	manVersion = flag.String("man-version", "", "the version the man pages' footer names (make man passes the Makefile's VERSION); default: this test binary's")
)

// assetDir is the directory a test that writes release assets writes
// into: dir, which make passes (-man-dir, -completions-dir), else a
// temporary one.
func assetDir(t *testing.T, dir string) string {
	t.Helper()
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// manPage is one generated page.
type manPage struct {
	// name is the command path with dashes: microshift-compose-build.
	name string
	path string
	// args run the command's --help: ["build"].
	args []string
}

// writeManPages writes a man page per command into dir with cobra/doc and
// go-md2man, each titled by its command (MICROSHIFT-COMPOSE-BUILD(1)) and
// naming version in its footer. The help text is first turned into
// Markdown that renders as --help prints it (internal/mantext): cobra/doc
// hands go-md2man the text as Markdown, which drops every <placeholder>
// as an HTML tag and fills tables into paragraphs. The date is
// SOURCE_DATE_EPOCH's (cobra/doc reads it), so that a release is
// reproducible.
func writeManPages(t *testing.T, dir, version string) []manPage {
	t.Helper()
	root := newRootCmd(io.Discard, io.Discard)
	root.DisableAutoGenTag = true
	escapeHelp(root, map[*pflag.Flag]bool{})
	var pages []manPage
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// cobra/doc's GenManTree skips these too.
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
				walk(sub)
			}
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "-")
		p := manPage{name: name, path: filepath.Join(dir, name+".1"), args: strings.Fields(c.CommandPath())[1:]}
		header := &doc.GenManHeader{Title: strings.ToUpper(name), Section: "1", Source: "microshift-compose " + version, Manual: "microshift-compose manual"}
		var page bytes.Buffer
		if err := doc.GenMan(c, header, &page); err != nil {
			t.Fatalf("writing the man page of %s: %v", c.CommandPath(), err)
		}
		if err := os.WriteFile(p.path, mantext.Roff(page.Bytes()), 0o644); err != nil {
			t.Fatal(err)
		}
		pages = append(pages, p)
	}
	walk(root)
	return pages
}

// escapeHelp turns the help of c and its subcommands into Markdown that
// renders as the text itself; each flag once (a persistent flag is shared
// by every command below the one declaring it).
func escapeHelp(c *cobra.Command, seen map[*pflag.Flag]bool) {
	c.Short = mantext.Inline(c.Short)
	c.Long = mantext.Block(c.Long)
	esc := func(f *pflag.Flag) {
		if !seen[f] {
			seen[f] = true
			f.Usage = mantext.Inline(f.Usage)
		}
	}
	c.Flags().VisitAll(esc)
	c.PersistentFlags().VisitAll(esc)
	for _, sub := range c.Commands() {
		escapeHelp(sub, seen)
	}
}

// placeholder is a <placeholder> of the help text: <name>, <output>,
// <sha256 of the reference and a newline>.
var placeholder = regexp.MustCompile(`<[^<>\n]+>`)

// renderMan formats a man page with groff's man macros for a terminal
// 250 columns wide, as man(1) does, without bold or underlining and
// without hyphenating words at the ends of lines (-rHY=0; man hyphenates
// prose, which splits a word on the screen, not in the page).
func renderMan(t *testing.T, groff, page string) string {
	t.Helper()
	cmd := exec.Command(groff, "-man", "-Tutf8", "-P-cbou", "-rLL=250n", "-rHY=0", "-ww", page)
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("groff %s: %v\n%s", page, err, stderr.String())
	}
	return string(out)
}

// TestManPages generates the man page of every command (with -man-dir,
// for the release archives and packages, into that directory), renders
// each with groff as man does and checks it against the command's --help:
// the title is the command's, the footer names the version, every
// <placeholder> of --help is in the rendered page, the examples and every
// indented line of the description (the tables of files, the commands to
// type) are there line for line, and the rest of the description and
// every flag's usage are there word for word.
func TestManPages(t *testing.T) {
	dir := assetDir(t, *manDir)
	version := *manVersion
	if version == "" {
		version = "v9.8.7-test"
	}
	pages := writeManPages(t, dir, version)
	// After writing them: `make man` on a machine without groff still
	// gets its pages (the check is then skipped, never in CI).
	groff := needTool(t, "groff", "groff-base")
	names := make([]string, len(pages))
	for i, p := range pages {
		names[i] = p.name
	}
	if !slices.Contains(names, "microshift-compose-build") || !slices.Contains(names, "microshift-compose-release-verify") || len(pages) < 20 {
		t.Errorf("man pages %v: want one per command, build and release verify among them", names)
	}

	// The help as the commands hold it, before it became Markdown.
	plain := newRootCmd(io.Discard, io.Discard)
	noSpace := func(s string) string { return strings.Join(strings.Fields(s), "") }
	oneSpace := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	total := 0
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			data, err := os.ReadFile(p.path)
			if err != nil {
				t.Fatal(err)
			}
			title := strings.ToUpper(p.name)
			if !strings.HasPrefix(string(data), `.nh`+"\n"+`.TH "`+title+`" "1" "`) || !strings.Contains(string(data), `" "microshift-compose `+version+`" "microshift-compose manual"`) {
				t.Errorf("%s: .TH line is not titled %s with the version %s:\n%s", p.name, title, version, strings.SplitN(string(data), "\n", 3)[1])
			}
			text := renderMan(t, groff, p.path)
			lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
			if head := strings.Fields(lines[0]); len(head) == 0 || head[0] != title+"(1)" || head[len(head)-1] != title+"(1)" {
				t.Errorf("%s: rendered header %q, want %s(1) at both ends", p.name, lines[0], title)
			}
			if foot := lines[len(lines)-1]; !strings.HasPrefix(foot, "microshift-compose "+version+" ") || !strings.HasSuffix(foot, title+"(1)") {
				t.Errorf("%s: rendered footer %q, want the version %s and %s(1)", p.name, foot, version, title)
			}

			help := mustRun(t, append(slices.Clone(p.args), "--help")...)
			wide := oneSpace(text)
			for _, ph := range placeholder.FindAllString(help, -1) {
				total++
				if want, got := strings.Count(oneSpace(help), oneSpace(ph)), strings.Count(wide, oneSpace(ph)); got < want {
					t.Errorf("%s: %s is %d times in --help, %d times in the man page", p.name, ph, want, got)
				}
			}

			c, _, err := plain.Find(p.args)
			if err != nil {
				t.Fatal(err)
			}
			verbatim := func(what, l string) {
				l = strings.TrimRight(l, " \t")
				if strings.TrimSpace(l) == "" {
					return
				}
				want := strings.TrimLeft(l, " \t")
				for _, r := range lines {
					if strings.TrimLeft(r, " ") == want {
						return
					}
				}
				t.Errorf("%s: %s line %q is not a line of the man page", p.name, what, want)
			}
			for _, l := range strings.Split(c.Example, "\n") {
				verbatim("example", l)
			}
			for _, l := range strings.Split(c.Long, "\n") {
				if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
					verbatim("preformatted", l)
				}
			}
			all := noSpace(text)
			for what, s := range map[string]string{"description": c.Long, "synopsis": c.UseLine(), "short description": c.Short} {
				if !strings.Contains(all, noSpace(s)) {
					t.Errorf("%s: the %s is not in the man page word for word:\n%s", p.name, what, s)
				}
			}
			c.Flags().VisitAll(func(f *pflag.Flag) {
				if !f.Hidden && !strings.Contains(all, noSpace(f.Usage)) {
					t.Errorf("%s: --%s's usage is not in the man page word for word: %s", p.name, f.Name, f.Usage)
				}
			})
		})
	}
	t.Logf("%d placeholders of --help found in %d rendered man pages", total, len(pages))
	if total < 30 {
		t.Errorf("%d placeholders in the commands' --help, want 30 or more: is the check live?", total)
	}
}
