package releases_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

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
