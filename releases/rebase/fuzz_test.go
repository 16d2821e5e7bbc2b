package rebase_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
)

// checkErr asserts the error contract of the parsers: one line, naming the
// input first.
func checkErr(t *testing.T, err error, display string) {
	t.Helper()
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("error is not one line: %q", msg)
	}
	if !strings.HasPrefix(msg, display+": ") {
		t.Fatalf("error does not start with %q: %q", display+": ", msg)
	}
}

func addFiles(f *testing.F, dir string) {
	paths, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed files in %s: %v", dir, err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// checkImages asserts what every accepted input guarantees: named, valid,
// unique images that Lookup finds.
func checkImages(t *testing.T, images []rebase.NamedImage, lookup func(string) (string, bool)) {
	t.Helper()
	seen := map[string]bool{}
	for _, im := range images {
		if im.Name == "" || seen[im.Name] {
			t.Fatalf("accepted an empty or duplicate name %q", im.Name)
		}
		seen[im.Name] = true
		if err := releases.ValidateRef(im.Ref); err != nil {
			t.Fatalf("accepted %s: %v", im.Name, err)
		}
		if ref, ok := lookup(im.Name); !ok || ref != im.Ref {
			t.Fatalf("Lookup(%q) = %q, %v; want %q", im.Name, ref, ok, im.Ref)
		}
	}
}

func FuzzParsePayload(f *testing.F) {
	addFiles(f, testdata("rebase", "payloads"))
	f.Add([]byte(isHead + `"spec": {"tags": [` + tagCLI + `]}}`))
	f.Add([]byte(`{"metadata": {"version": "4.18.1"}, "config": {"architecture": "arm64"}, "references": {"kind": "ImageStream", "apiVersion": "image.openshift.io/v1", "spec": {"tags": [` + tagCLI + `]}}}`))
	f.Add([]byte("kind: ImageStream\napiVersion: image.openshift.io/v1\nmetadata: {name: 4.18.1}\nspec:\n  tags:\n  - name: cli\n    from: {kind: DockerImage, name: quay.io/x/cli:1}\n"))
	f.Add([]byte(`{"kind": "ImageStream", "spec": {"tags": [{"name": 1}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		const display = "fuzz/payload.json"
		p, err := rebase.ParsePayload(display, data)
		if err != nil {
			checkErr(t, err, display)
			return
		}
		if _, err := semver.NewVersion(p.Version); err != nil {
			t.Fatalf("accepted version %q: %v", p.Version, err)
		}
		if len(p.Images) == 0 {
			t.Fatal("accepted a payload without images")
		}
		checkImages(t, p.Images, p.Lookup)
		for _, a := range releases.Arches {
			if err := p.CheckArch(a); err != nil && strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("CheckArch error is not one line: %q", err)
			}
		}
	})
}

func FuzzParseCSV(f *testing.F) {
	addFiles(f, testdata("rebase", "csvs"))
	f.Add([]byte(csvHead + "  relatedImages:\n  - name: a\n    image: quay.io/x/a:1\n  - name: a\n    image: quay.io/x/b:1\n"))
	f.Add([]byte(`{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "spec": {"relatedImages": [{"name": "a", "image": "quay.io/x/a@sha256:1111111111111111111111111111111111111111111111111111111111111111"}]}}`))
	f.Add([]byte("kind: ClusterServiceVersion\nspec: {relatedImages: x}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const display = "fuzz/csv.yaml"
		c, err := rebase.ParseCSV(display, data)
		if err != nil {
			checkErr(t, err, display)
			return
		}
		if len(c.Images) == 0 {
			t.Fatal("accepted a CSV without named relatedImages")
		}
		checkImages(t, c.Images, c.Lookup)
	})
}

// FuzzDiffMarkdown diffs two core release files that parse: the Markdown's
// tables keep their columns and nothing but a newline is a control
// character, whatever the keys and references hold.
func FuzzDiffMarkdown(f *testing.F) {
	a := `{"release": {"base": "5.0.0"}, "images": {"cli": "quay.io/a/cli:1", "pod": "quay.io/a/pod@sha256:` + strings.Repeat("a", 64) + `"}}`
	b := `{"release": {"base": "5.0.1"}, "images": {"cli": "quay.io/b/cli:2", "a|b": "quay.io/a/x:1"}}`
	f.Add([]byte(a), []byte(b))
	f.Fuzz(func(t *testing.T, da, db []byte) {
		load := func(data []byte) *releases.Release {
			file, err := releases.ParseFile("f.json", "release-x86_64.json", data)
			if err != nil {
				return nil
			}
			r, err := releases.New("fuzz", []*releases.File{file})
			if err != nil {
				return nil
			}
			return r
		}
		ra, rb := load(da), load(db)
		if ra == nil || rb == nil {
			return
		}
		md := string(rebase.DiffReleases(ra, rb, "old", "new").Markdown())
		if strings.ContainsFunc(strings.ReplaceAll(md, "\n", ""), func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("the Markdown holds a control character:\n%s", md)
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
