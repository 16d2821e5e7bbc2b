package rebase_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
)

func embedded(t *testing.T, stream string) *releases.Release {
	t.Helper()
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	r, err := releases.Select(rels, stream)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func diffJSON(t *testing.T, d *rebase.ReleaseDiff) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDiffEmbeddedGolden diffs the two embedded releases: every change of
// the 4.18 → 5.0 rebase, as Markdown and JSON.
func TestDiffEmbeddedGolden(t *testing.T) {
	d := rebase.DiffReleases(embedded(t, "4.18"), embedded(t, "5.0"), "4.18 (embedded)", "5.0 (embedded)")
	golden(t, "release-diff-4.18-5.0.md", d.Markdown())
	golden(t, "release-diff-4.18-5.0.json", diffJSON(t, d))
	if d.Empty() || len(d.Unchanged) != 1 || d.Unchanged[0] != "gateway-api" {
		t.Errorf("Empty() = %v, Unchanged = %v; want gateway-api unchanged", d.Empty(), d.Unchanged)
	}
	if d.Components[0].Component != "core" {
		t.Errorf("first component %s, want core", d.Components[0].Component)
	}
}

// TestDiffAfterUpdate diffs a release before and after a payload update:
// the pull request a rebase opens.
func TestDiffAfterUpdate(t *testing.T) {
	dir := copyRelease(t, "release-4.18")
	prepareAndWrite(t, dir, rebase.UpdateOptions{Payloads: payloads418(t)})
	d := rebase.DiffReleases(embedded(t, "4.18"), loadRelease(t, dir), "4.18 (embedded)", "assets/release")
	golden(t, "release-diff-4.18-payload.md", d.Markdown())
	s := d.Summary
	if s.Redigested != 24 || s.Added+s.Removed+s.OtherChange != 0 || s.BaseChanges != 6 {
		t.Errorf("Summary = %+v, want 24 re-digested and 6 base changes only", s)
	}
}

// TestDiffKinds covers every kind of change on small releases.
func TestDiffKinds(t *testing.T) {
	const d1, d2 = "@sha256:1111111111111111111111111111111111111111111111111111111111111111", "@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	mk := func(files ...*releases.File) *releases.Release {
		r, err := releases.New("test", files)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	file := func(name, base string, kv ...string) *releases.File {
		comp, arch, _, _ := releases.ParseFileName(name)
		f := &releases.File{Name: name, Component: comp, Arch: arch, Base: base}
		for _, s := range kv {
			k, v, _ := strings.Cut(s, "=")
			f.Images = append(f.Images, releases.Image{Key: k, Ref: v})
		}
		return f
	}
	oldRel := mk(
		file("release-x86_64.json", "4.19.0", "cli=quay.io/x/cli"+d1, "pod=quay.io/x/pod"+d1, "gone=quay.io/x/gone"+d1, "tagged=quay.io/x/t:1"),
		file("release-olm-x86_64.json", "4.19.0", "olm=quay.io/x/olm"+d1),
	)
	newRel := mk(
		file("release-x86_64.json", "4.19.1", "cli=quay.io/x/cli"+d2, "pod=quay.io/y/pod"+d1, "new=quay.io/x/new"+d2, "tagged=quay.io/x/t:2"),
		file("release-sriov-x86_64.json", "4.19.0-202609", "sriov=quay.io/x/sriov"+d2),
	)
	d := rebase.DiffReleases(oldRel, newRel, "old", "new")
	golden(t, "release-diff-kinds.md", d.Markdown())
	want := rebase.Summary{Added: 2, Removed: 2, Redigested: 1, OtherChange: 2, BaseChanges: 1}
	if d.Summary != want {
		t.Errorf("Summary = %+v, want %+v", d.Summary, want)
	}
	kinds := map[string]string{}
	for _, c := range d.Components[0].Files[0].Changed {
		kinds[c.Key] = c.Kind
	}
	if kinds["cli"] != rebase.ChangeDigest || kinds["pod"] != rebase.ChangeRepository || kinds["tagged"] != rebase.ChangeTag {
		t.Errorf("change kinds = %v", kinds)
	}
	same := rebase.DiffReleases(oldRel, oldRel, "a", "b")
	if !same.Empty() || !strings.Contains(string(same.Markdown()), "No image changes.") {
		t.Errorf("diff of a release with itself:\n%s", same.Markdown())
	}
}

// TestImport creates the embedded data from the upstream directory: the
// result is byte-identical to the bundle in releases/data, so adding a
// release is one command plus a review.
func TestImport(t *testing.T) {
	rels, _ := releases.Embedded()
	var origin string
	for _, r := range rels {
		if r.Stream() == "4.18" {
			origin = r.Origin
		}
	}
	dataDir := t.TempDir()
	src := copyRelease(t, "release-4.18")
	res, err := rebase.Import(src, dataDir, origin, false)
	if err != nil {
		t.Fatalf("Import() = %v", err)
	}
	got, err := os.ReadFile(filepath.Join(dataDir, "4.18.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "data", "4.18.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Import(release-4.18) differs from releases/data/4.18.json:\n%s", testutil.FirstDiff(want, got))
	}
	if res.Path != filepath.Join(dataDir, "4.18.json") || res.Files != 8 || res.Images != 42 || res.Unpinned != 0 || res.Replaced || res.Unchanged {
		t.Errorf("Import() = %+v", res)
	}
	if st, err := os.Stat(res.Path); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("bundle mode: %v %v", st.Mode(), err)
	}

	// Again: nothing to write.
	res, err = rebase.Import(src, dataDir, origin, false)
	if err != nil || !res.Unchanged {
		t.Errorf("Import(same) = %+v, %v; want Unchanged", res, err)
	}
	// A new payload for the same stream: refused without force...
	prepareAndWrite(t, src, rebase.UpdateOptions{Payloads: payloads418(t)})
	_, err = rebase.Import(src, dataDir, "openshift/microshift at abcdef", false)
	wantErr := filepath.Join(dataDir, "4.18.json") + ` (release 4.18.0, origin "` + origin + `"): release bundle already exists; pass --force to replace it`
	if errString(err) != wantErr {
		t.Errorf("Import(existing) = %v\nwant %s", err, wantErr)
	}
	if now, _ := os.ReadFile(res.Path); !bytes.Equal(now, want) {
		t.Errorf("a refused import changed the bundle")
	}
	// ...and replaced with it, saying what changed.
	res, err = rebase.Import(src, dataDir, "openshift/microshift at abcdef", true)
	if err != nil || !res.Replaced || res.Diff == nil || res.Diff.Summary.Redigested != 24 {
		t.Fatalf("Import(force) = %+v, %v", res, err)
	}
	back, err := releases.ParseBundle("bundle", mustRead(t, res.Path))
	if err != nil || back.Origin != "openshift/microshift at abcdef" || back.Base(releases.X86_64) != "4.18.0-0.nightly-2026-09-02-101010" {
		t.Errorf("imported bundle: %v, origin %q", err, back.Origin)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestImportErrors(t *testing.T) {
	src := copyRelease(t, "release-4.18")
	data := t.TempDir()
	file := filepath.Join(data, "file")
	os.WriteFile(file, nil, 0o644)
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "release-x86_64.json"), []byte(`{"release": {"base": "x"}, "images": {}}`), 0o644)
	for _, tc := range []struct{ name, dir, data, origin, want string }{
		{"no origin", src, data, "  ", `an origin is required: say where the files come from, e.g. "openshift/microshift at <commit>"`},
		{"origin on two lines", src, data, "a\nb", `origin "a\nb" must be one line of text`},
		{"no data dir", src, filepath.Join(data, "nope"), "o", "release data directory " + filepath.Join(data, "nope") + " does not exist (run in the microshift-compose source tree, or pass --data-dir)"},
		{"data dir is a file", src, file, "o", "release data directory " + file + " is not a directory"},
		{"bad release", bad, data, "o", bad + `: release-x86_64.json: release.base "x" is not a semantic version: invalid semantic version`},
		{"missing release dir", filepath.Join(bad, "nope"), data, "o", "release dir " + filepath.Join(bad, "nope") + " does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rebase.Import(tc.dir, tc.data, tc.origin, false)
			if errString(err) != tc.want {
				t.Errorf("Import() = %v\nwant %s", err, tc.want)
			}
			if entries, _ := os.ReadDir(data); len(entries) != 1 {
				t.Errorf("a failed import wrote into the data dir: %v", entries)
			}
		})
	}
}

// TestDiffMarkdownHostileValues: a release's label, origin, component,
// file and image key, whatever they hold, stay text or code in the
// Markdown: nothing opens HTML, a comment, a link or a code span.
func TestDiffMarkdownHostileValues(t *testing.T) {
	d := &rebase.ReleaseDiff{
		Old:        rebase.ReleaseSide{Label: "dir`<!-- hide", Origin: "[x](https://example.com)"},
		New:        rebase.ReleaseSide{Label: "<details><summary>new"},
		Components: []rebase.ComponentDiff{{Component: "c<b>", Files: []rebase.FileDiff{{File: "release-c`-x86_64.json", Arch: "x86_64", Status: rebase.FileAdded, NewBase: "5.0.0``<!--", Added: []releases.Image{{Key: "k`|<!--", Ref: "quay.io/a/b:1"}}}}}},
		Unchanged:  []string{"<img src=x>"},
		Notes:      []string{"note <!-- hidden"},
		Summary:    rebase.Summary{Added: 1},
	}
	md := string(d.Markdown())
	if got := testutil.MarkupOutsideCode(md); got != "" {
		t.Errorf("markup outside code spans at %q:\n%s", got, md)
	}
	for _, want := range []string{"### MicroShift release dir\\`\\<!-- hide → \\<details\\>\\<summary\\>new", "``release-c`-x86_64.json``", "``k`\\|<!--``"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
}
