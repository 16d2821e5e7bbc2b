package releases_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

// checkErr asserts the error contract every parser keeps: one line, naming
// the input first.
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

func FuzzParseFile(f *testing.F) {
	for _, dir := range []string{"main", "release-4.18"} {
		names, data := refFiles(f, dir)
		for _, n := range names {
			f.Add(n, data[n])
		}
	}
	f.Add("release-x86_64.json", []byte(`{"release": {"base": "4.18.0"}, "images": {}}`))
	f.Add("release-olm-aarch64.json", []byte(`{"images": {"a": "quay.io/a/b:1", "a": "x"}, "release": {"base": "4.18.0"}}`))
	f.Add("release-arm64.json", []byte(`{}`))
	f.Add("release-x86_64.json", []byte(`{"release": {"base": "1"}, "images": {"a": "quay.io/x\ny:1"}}`))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		const display = "fuzz/input.json"
		file, err := releases.ParseFile(display, name, data)
		if err != nil {
			checkErr(t, err, display)
			return
		}
		if file.Name != name || file.Base == "" {
			t.Fatalf("ParseFile accepted %q with name %q, base %q", name, file.Name, file.Base)
		}
		if got := releases.FileName(file.Component, file.Arch); got != name {
			t.Fatalf("FileName(%q, %q) = %q, want %q", file.Component, file.Arch, got, name)
		}
		enc := file.Encode()
		back, err := releases.ParseFile(display, name, enc)
		if err != nil {
			t.Fatalf("ParseFile(Encode()) = %v\n%s", err, enc)
		}
		if !reflect.DeepEqual(back, file) {
			t.Fatalf("ParseFile(Encode(f)) = %+v, want %+v", back, file)
		}
		if again := back.Encode(); string(again) != string(enc) {
			t.Fatalf("Encode is not stable:\n%s\n%s", enc, again)
		}
	})
}

func FuzzParseBundle(f *testing.F) {
	paths, _ := filepath.Glob("data/*.json")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"stream": "4.18", "origin": "o", "files": {"release-x86_64.json": {"release": {"base": "4.18.1"}, "images": {"cli": "quay.io/x/cli:1"}}}}`))
	f.Add([]byte(`{"stream": "4.18", "files": {"release-ppc64le.json": {}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		const display = "fuzz/bundle.json"
		r, err := releases.ParseBundle(display, data)
		if err != nil {
			checkErr(t, err, display)
			return
		}
		if r.Source != releases.EmbeddedSource || len(r.Arches()) == 0 {
			t.Fatalf("ParseBundle gave source %q, arches %v", r.Source, r.Arches())
		}
		enc := releases.EncodeBundle(r, r.Origin)
		back, err := releases.ParseBundle(display, enc)
		if err != nil {
			t.Fatalf("ParseBundle(EncodeBundle()) = %v\n%s", err, enc)
		}
		if back.Origin != r.Origin || !back.Version.Equal(r.Version) || !reflect.DeepEqual(back.Files(), r.Files()) {
			t.Fatalf("ParseBundle(EncodeBundle(r)) differs from r")
		}
	})
}

// FuzzPatch rewrites a release file's base and first image reference in
// place: whatever the values, the result parses to exactly the update,
// and nothing but the two values changes (every other byte is kept).
func FuzzPatch(f *testing.F) {
	core := []byte("{\n  \"release\": {\"base\": \"5.0.0-0.nightly-2026-07-23-224236\"},\n  \"images\": {\n    \"cli\": \"quay.io/openshift/cli@sha256:" + strings.Repeat("a", 64) + "\",\n    \"pod\": \"quay.io/openshift/pod:4.18\"\n  }\n}\n")
	f.Add(core, "5.0.1", "quay.io/openshift/cli@sha256:"+strings.Repeat("b", 64))
	f.Add(core, "5.0.0\"}, \"x\": {\"y", "quay.io/a/b:\u2028")
	f.Add([]byte(`{"images": {"a\u0041": "quay.io/a/b:1"}, "release": {"base": "1.0.0"}}`), "2.0.0", "quay.io/a/b:2")
	f.Fuzz(func(t *testing.T, data []byte, base, ref string) {
		const name, display = "release-x86_64.json", "fuzz/release-x86_64.json"
		file, err := releases.ParseFile(display, name, data)
		if err != nil || len(file.Images) == 0 || strings.TrimSpace(base) == "" || releases.ValidateRef(ref) != nil {
			return
		}
		if a := releases.BaseArch(base); a != "" && a != "x86_64" && a != "multi" {
			return // ParseFile refuses another arch's base
		}
		updated := *file
		updated.Base = base
		updated.Images = append([]releases.Image(nil), file.Images...)
		updated.Images[0].Ref = ref
		out, err := releases.Patch(display, data, &updated)
		if changed := base != file.Base || ref != file.Images[0].Ref; changed && (!utf8.ValidString(base) || !utf8.ValidString(ref)) {
			if err == nil {
				t.Fatalf("Patch wrote a value that is not valid UTF-8:\n%s", out)
			}
			return
		}
		if err != nil {
			t.Fatalf("Patch = %v", err)
		}
		back, err := releases.ParseFile(display, name, out)
		if err != nil {
			t.Fatalf("the patched file does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(back, &updated) {
			t.Fatalf("the patched file parses to %+v, want %+v", back, &updated)
		}
	})
}

// FuzzRecord loads a microshift-io release directory with a fuzzed record
// of its RPMs and resolved tags: no panic; an error is one line; a record
// that loads resolves only tags the files name, each to a digest of the
// same repository, and gives the build its RPMs' version says.
func FuzzRecord(f *testing.F) {
	dir := f.TempDir()
	files := testutil.MicroShiftIORelease(f, refDir(f, "release-4.21"), dir)
	version := testutil.MicroShiftIOVersion("4.21.0")
	tag := "ghcr.io/topolvm/topolvm-with-sidecar:" + testutil.MicroShiftIOTopoLVMTag
	good := goodRecord(f, files, version, tag)
	f.Add(good)
	f.Add([]byte(strings.Replace(string(good), "ghcr.io/topolvm/topolvm-with-sidecar@", "ghcr.io/other/x@", 1)))
	f.Add([]byte(strings.Replace(string(good), "_okd_scos", "-okd-scos", 1)))
	f.Add([]byte(`{"version": "4.21.0", "rpms": [], "files": {}, "resolved": {"a": "b"}}`))
	f.Fuzz(func(t *testing.T, record []byte) {
		d := t.TempDir()
		for n, data := range files {
			if err := os.WriteFile(filepath.Join(d, n), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, releases.RPMRecordFile), record, 0o644); err != nil {
			t.Fatal(err)
		}
		rel, err := releases.LoadDir(d)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		for from, to := range rel.Resolved {
			if releases.IsDigestPinned(from) || !releases.IsDigestPinned(to) {
				t.Fatalf("resolved %q -> %q", from, to)
			}
		}
		if len(rel.RPMs) > 0 && (rel.Build == "microshift-io") != (rel.MicroShiftIO != nil) {
			t.Fatalf("RPMs %v gave build %q, %+v", rel.RPMs, rel.Build, rel.MicroShiftIO)
		}
	})
}

// goodRecord writes a good record of files through WriteRecorded and
// returns its bytes.
func goodRecord(f *testing.F, files map[string][]byte, version, tag string) []byte {
	dir := filepath.Join(f.TempDir(), "r")
	rpms := []releases.RPM{{NEVRA: "microshift-release-info-" + version + "-1.el9.noarch", SHA256: strings.Repeat("a", 64)}}
	if _, err := releases.WriteRecorded(dir, files, releases.Record{RPMs: rpms, Resolved: map[string]string{tag: "ghcr.io/topolvm/topolvm-with-sidecar@sha256:" + strings.Repeat("c", 64)}}, false); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, releases.RPMRecordFile))
	if err != nil {
		f.Fatal(err)
	}
	return data
}
