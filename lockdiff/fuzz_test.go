package lockdiff_test

import (
	"os"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/lockdiff"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

// FuzzMarkdown diffs two locks that parse and checks the Markdown's
// structure: every table row has its header's cells, and nothing but a
// newline is a control character, whatever the locks hold.
func FuzzMarkdown(f *testing.F) {
	full, err := os.ReadFile(testdata("lockdiff", "full-footprint.lock.json"))
	if err != nil {
		f.Fatal(err)
	}
	minimal, err := os.ReadFile(testdata("lockdiff", "minimal-footprint.lock.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(full, minimal)
	f.Add(minimal, []byte(strings.Replace(string(minimal), `"profile": "minimal"`, `"profile": "a | b"`, 1)))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		pa, err := lockfile.Parse("a.json", a)
		if err != nil {
			return
		}
		pb, err := lockfile.Parse("b.json", b)
		if err != nil {
			return
		}
		d, err := lockdiff.Compare(&lockdiff.Lock{Path: "a.json", Plan: pa}, &lockdiff.Lock{Path: "b.json", Plan: pb})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "a.json: ") && !strings.HasPrefix(err.Error(), "b.json: ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: not one line naming the lock", err)
			}
			return
		}
		md := string(d.Markdown())
		if text.HasUnsafe(strings.ReplaceAll(md, "\n", "")) {
			t.Fatalf("the Markdown holds a control character:\n%s", md)
		}
		if got := testutil.MarkupOutsideCode(md); got != "" {
			t.Fatalf("markup outside code spans at %q:\n%s", got, md)
		}
		header := 0
		for _, l := range strings.Split(md, "\n") {
			switch {
			case !strings.HasPrefix(l, "|"):
				header = 0
			case header == 0:
				header = testutil.MarkdownCells(l)
			case testutil.MarkdownCells(l) != header:
				t.Fatalf("table row %q has %d cells, its header %d:\n%s", l, testutil.MarkdownCells(l), header, md)
			}
		}
	})
}
