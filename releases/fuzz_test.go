package releases_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

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
