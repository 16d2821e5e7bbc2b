package releases_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

// The embedded bundles of the branches ../shared/reference holds at the
// same commit are those directories: same files, same contents, same order
// of images. The others (5.0 from release-5.0, 5.1 from main) are checked
// against the upstream git directory by releases/knowledge/upstream.
func TestEmbeddedMatchesReference(t *testing.T) {
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatalf("Embedded() = %v", err)
	}
	var streams []string
	for _, r := range rels {
		streams = append(streams, r.Stream())
	}
	if want := []string{"5.1", "5.0", "4.22", "4.21", "4.20", "4.19", "4.18", "4.17", "4.16", "4.15", "4.14"}; !reflect.DeepEqual(streams, want) {
		t.Fatalf("Embedded() = %v, want %v: the newest release of each stream, newest first", streams, want)
	}
	source, err := os.ReadFile(filepath.Join(sharedDir(t), "reference", "microshift-release", "SOURCE.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// SOURCE.txt records "<branch>: <commit>" pairs.
	commits := map[string]string{}
	for _, m := range regexp.MustCompile(`(main|release-[0-9.]+):\s+([0-9a-f]{12})`).FindAllStringSubmatch(string(source), -1) {
		commits[m[1]] = m[2]
	}
	compared := 0
	for _, emb := range rels {
		t.Run(emb.Stream(), func(t *testing.T) {
			if emb.Source != releases.EmbeddedSource || emb.String() != emb.Stream()+" (embedded)" {
				t.Errorf("source %q, String() %q", emb.Source, emb.String())
			}
			// The origin names the upstream branch and commit.
			m := regexp.MustCompile(`^openshift/microshift (\S+) at ([0-9a-f]{12})[ ,]`).FindStringSubmatch(emb.Origin)
			if m == nil {
				t.Fatalf("Origin = %q, want openshift/microshift <branch> at <commit>", emb.Origin)
			}
			if (m[1] == "main") != emb.Development {
				t.Errorf("Development = %v for a stream from %s", emb.Development, m[1])
			}
			dir, commit := m[1], m[2]
			if commits[dir] != commit || strings.Contains(emb.Origin, "release files of") {
				t.Skipf("%s at %s is not in ../shared/reference (it holds %s at %q)", dir, commit, dir, commits[dir])
			}
			compared++
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
	if compared < 9 {
		t.Errorf("only %d embedded releases compared with ../shared/reference, want the 9 release branches 4.14 to 4.22", compared)
	}
	// Embedded is computed once.
	again, _ := releases.Embedded()
	if again[0] != rels[0] {
		t.Errorf("Embedded() returned new values on the second call")
	}
}

// TestEmbeddedReleasesChecked: a release selected from the embedded ones
// is parsed without checking its image references (the binary embeds it),
// so each is parsed here with every check, and must be the same release.
func TestEmbeddedReleasesChecked(t *testing.T) {
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatalf("Embedded() = %v", err)
	}
	for _, want := range rels {
		t.Run(want.Stream(), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("data", want.Stream()+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := releases.ParseBundle(want.Stream(), data); err != nil {
				t.Errorf("ParseBundle(%s) = %v", want.Stream(), err)
			}
			got, err := releases.SelectEmbedded(want.Stream())
			if err != nil {
				t.Fatalf("SelectEmbedded(%s) = %v", want.Stream(), err)
			}
			if !got.Version.Equal(want.Version) || got.Origin != want.Origin || got.Development != want.Development || !reflect.DeepEqual(got.Files(), want.Files()) {
				t.Errorf("SelectEmbedded(%s) differs from the checked parse of the same bundle", want.Stream())
			}
		})
	}
}

func TestBundleRoundTrip(t *testing.T) {
	paths, err := filepath.Glob("data/*.json")
	if err != nil || len(paths) != 11 {
		t.Fatalf("data/*.json = %v, %v; want a bundle per stream, 4.14 to 5.1", paths, err)
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
			if back.Origin != r.Origin || back.Development != r.Development || !back.Version.Equal(r.Version) || !reflect.DeepEqual(back.Files(), r.Files()) {
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
	emb, err := releases.Select(rels, "4.18")
	if err != nil {
		t.Fatal(err)
	}
	if got := releases.EncodeBundle(r, emb.Origin); !bytes.Equal(got, data) {
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

// TestSelectEmbeddedMatchesSelect checks that choosing an embedded release
// from the index (which parses only the chosen bundle) picks what choosing
// among all parsed bundles picks, and fails alike.
func TestSelectEmbeddedMatchesSelect(t *testing.T) {
	rels, err := releases.Embedded()
	if err != nil {
		t.Fatalf("Embedded() = %v", err)
	}
	for _, c := range []string{"", "4.14", "~4.18", "4.18.x", ">=4.16 <4.20", "<4.15", ">=5", "5.0", "9.9", "< 4.0", "not a constraint"} {
		want, wantErr := releases.Select(rels, c)
		got, gotErr := releases.SelectEmbedded(c)
		if (wantErr == nil) != (gotErr == nil) {
			t.Errorf("SelectEmbedded(%q) error = %v, Select error = %v", c, gotErr, wantErr)
			continue
		}
		if wantErr != nil {
			if gotErr.Error() != wantErr.Error() {
				t.Errorf("SelectEmbedded(%q) error = %q, want %q", c, gotErr, wantErr)
			}
			continue
		}
		if !got.Version.Equal(want.Version) || got.Origin != want.Origin {
			t.Errorf("SelectEmbedded(%q) = %s (%s), want %s (%s)", c, got.Version, got.Origin, want.Version, want.Origin)
		}
	}
}
