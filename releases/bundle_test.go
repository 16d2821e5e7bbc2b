package releases_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

// The embedded bundles were generated from the upstream reference
// directories: same files, same contents, same order of images.
func TestEmbeddedMatchesReference(t *testing.T) {
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatalf("Embedded() = %v", err)
	}
	if len(rels) != 2 || rels[0].Stream() != "5.0" || rels[1].Stream() != "4.18" {
		t.Fatalf("Embedded() = %v, want [5.0 4.18] newest first", rels)
	}
	source, err := os.ReadFile(filepath.Join(sharedDir(t), "reference", "microshift-release", "SOURCE.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for i, dir := range []string{"main", "release-4.18"} {
		emb := rels[i]
		t.Run(dir, func(t *testing.T) {
			if emb.Source != releases.EmbeddedSource || emb.String() != emb.Stream()+" (embedded)" {
				t.Errorf("source %q, String() %q", emb.Source, emb.String())
			}
			// The origin names the upstream commit SOURCE.txt records.
			commit := sourceCommit(string(source), dir)
			if commit == "" || !strings.Contains(emb.Origin, commit) {
				t.Errorf("Origin = %q, want it to name commit %q from SOURCE.txt", emb.Origin, commit)
			}
			ref, err := releases.LoadDir(refDir(t, dir))
			if err != nil {
				t.Fatal(err)
			}
			if !emb.Version.Equal(ref.Version) {
				t.Errorf("version %s, reference %s", emb.Version, ref.Version)
			}
			ef, rf := emb.Files(), ref.Files()
			if len(ef) != len(rf) {
				t.Fatalf("embedded has %d files, reference %d", len(ef), len(rf))
			}
			for j := range ef {
				if !reflect.DeepEqual(ef[j], rf[j]) {
					t.Errorf("embedded %s differs from the reference %s", ef[j].Name, rf[j].Name)
				}
			}
		})
	}
	// Embedded is computed once.
	again, _ := releases.Embedded()
	if again[0] != rels[0] {
		t.Errorf("Embedded() returned new values on the second call")
	}
}

func TestBundleRoundTrip(t *testing.T) {
	paths, err := filepath.Glob("data/*.json")
	if err != nil || len(paths) != 2 {
		t.Fatalf("data/*.json = %v, %v; want two bundles", paths, err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			r, err := releases.ParseBundle(p, data)
			if err != nil {
				t.Fatalf("ParseBundle(%s) = %v", p, err)
			}
			if want := strings.TrimSuffix(filepath.Base(p), ".json"); r.Stream() != want {
				t.Errorf("stream %s, want %s (the file name)", r.Stream(), want)
			}
			enc := releases.EncodeBundle(r, r.Origin)
			if !bytes.Equal(enc, data) {
				t.Errorf("EncodeBundle(ParseBundle(%s)) is not byte-identical: %s", p, testutil.FirstDiff(data, enc))
			}
			back, err := releases.ParseBundle("again", enc)
			if err != nil {
				t.Fatalf("ParseBundle(EncodeBundle()) = %v", err)
			}
			if back.Origin != r.Origin || !back.Version.Equal(r.Version) || !reflect.DeepEqual(back.Files(), r.Files()) {
				t.Errorf("ParseBundle(EncodeBundle(r)) differs from r")
			}
		})
	}
}

// TestEncodeBundleFromDir is how the embedded data is produced: load the
// upstream directory, encode it as a bundle.
func TestEncodeBundleFromDir(t *testing.T) {
	r, err := releases.LoadDir(refDir(t, "release-4.18"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("data/4.18.json")
	if err != nil {
		t.Fatal(err)
	}
	rels, _ := releases.Embedded()
	if got := releases.EncodeBundle(r, rels[1].Origin); !bytes.Equal(got, data) {
		t.Errorf("EncodeBundle(LoadDir(release-4.18)) differs from data/4.18.json: %s", testutil.FirstDiff(data, got))
	}
}

func TestParseBundleErrors(t *testing.T) {
	core := func(base string) string {
		return `{"release": {"base": "` + base + `"}, "images": {"cli": "quay.io/x/cli@` + digestA + `"}}`
	}
	for _, tc := range []struct {
		name, data, want string
	}{
		{"invalid JSON", `{"stream": `, "b.json: invalid release bundle: unexpected EOF"},
		{"not an object", `[]`, "b.json: invalid release bundle: json: cannot unmarshal array into Go value of type releases.bundleDoc"},
		{"unknown field", `{"stream": "4.18", "version": 1}`, `b.json: invalid release bundle: json: unknown field "version"`},
		{"stream a number", `{"stream": 4.18}`, "b.json: invalid release bundle: json: cannot unmarshal number into Go struct field bundleDoc.stream of type string"},
		{"trailing data", `{"stream": "4.18"} {}`, "b.json: invalid release bundle: unexpected data after the JSON document"},
		{"no files", `{"stream": "4.18", "origin": "x", "files": {}}`,
			"b.json: embedded: no core release file (release-x86_64.json or release-aarch64.json)"},
		{"bad file name", `{"stream": "4.18", "files": {"release-ppc64le.json": ` + core("4.18.0") + `}}`,
			"b.json: release-ppc64le.json: file name does not end in -x86_64.json or -aarch64.json"},
		{"not a release file name", `{"stream": "4.18", "files": {"images.json": ` + core("4.18.0") + `}}`,
			"b.json: images.json: not a release file name (want release-<arch>.json or release-<component>-<arch>.json)"},
		{"bad file", `{"stream": "4.18", "files": {"release-x86_64.json": {"release": {"base": ""}, "images": {}}}}`,
			"b.json: release-x86_64.json: line 1, column 22: release.base is empty"},
		{"file not an object", `{"stream": "4.18", "files": {"release-x86_64.json": []}}`,
			"b.json: release-x86_64.json: line 1, column 1: top level must be a JSON object, got an array"},
		{"stream mismatch", `{"stream": "4.19", "files": {"release-x86_64.json": ` + core("4.18.2") + `}}`,
			`b.json: stream "4.19" does not match the core files' version 4.18.2`},
		{"core files disagree", `{"stream": "4.18", "files": {"release-x86_64.json": ` + core("4.18.2") + `, "release-aarch64.json": ` + core("4.18.3") + `}}`,
			"b.json: embedded: core files disagree on the release: release-aarch64.json says 4.18.3, release-x86_64.json says 4.18.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := releases.ParseBundle("b.json", []byte(tc.data))
			if err == nil || err.Error() != tc.want {
				t.Errorf("ParseBundle() = %v\nwant %q", err, tc.want)
			}
		})
	}
	// A good minimal bundle, for contrast.
	r, err := releases.ParseBundle("b.json", []byte(`{"stream": "4.18", "origin": "here", "files": {"release-x86_64.json": `+core("4.18.2")+`}}`))
	if err != nil || r.Stream() != "4.18" || r.Origin != "here" || len(r.Files()) != 1 {
		t.Errorf("ParseBundle(minimal) = %v, %v", r, err)
	}
}

// sourceCommit finds the commit SOURCE.txt records for a branch directory,
// in either of its layouts: "main: openshift/microshift at <commit>, ..."
// or "main:   <commit> (...)    release-4.18: <commit>" (several a line).
func sourceCommit(source, dir string) string {
	fields := strings.Fields(source)
	for i, f := range fields {
		if f != dir+":" || i+1 >= len(fields) {
			continue
		}
		next := fields[i+1]
		if next == "openshift/microshift" && i+3 < len(fields) && fields[i+2] == "at" {
			next = fields[i+3]
		}
		return strings.TrimRight(next, ",")
	}
	return ""
}
