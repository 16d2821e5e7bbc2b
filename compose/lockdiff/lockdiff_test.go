package lockdiff_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/compose/lockdiff"
)

var update = flag.Bool("update", false, "rewrite golden files")

func testdata(elem ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata"}, elem...)...)
}

func load(t *testing.T, path string) *lockdiff.Lock {
	t.Helper()
	l, err := lockdiff.Load(path)
	if err != nil {
		t.Fatalf("Load(%s) = %v", path, err)
	}
	return l
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := testdata("lockdiff", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (regenerate with go test ./compose/lockdiff -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./compose/lockdiff -update, then review):\ngot:\n%s", path, got)
	}
}

func asJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The locks `build` writes for the golden builds: profiles, arches and
// releases compared, as a pull request would show them.
func TestCompareGolden(t *testing.T) {
	for _, tc := range []struct{ name, old, new string }{
		{"minimal-to-full-5.0-x86_64", "golden/5.0/minimal-x86_64/compose.lock.json", "golden/5.0/full-x86_64/compose.lock.json"},
		{"full-4.18-to-5.0-aarch64", "golden/4.18/full-aarch64/compose.lock.json", "golden/5.0/full-aarch64/compose.lock.json"},
		{"manifests-minimal-to-hostpath-5.0-x86_64", "golden/5.0/minimal-x86_64/compose.lock.json", "golden/manifests/5.0-x86_64/compose.lock.json"},
		{"manifests-removed", "golden/manifests/4.18-aarch64/compose.lock.json", "golden/4.18/minimal-aarch64/compose.lock.json"},
		{"footprint-minimal-to-full", "lockdiff/minimal-footprint.lock.json", "lockdiff/full-footprint.lock.json"},
		{"footprint-one-side", "golden/5.0/minimal-x86_64/compose.lock.json", "lockdiff/full-footprint.lock.json"},
		{"footprint-unreadable", "lockdiff/minimal-footprint.lock.json", "lockdiff/full-footprint-unreadable.lock.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := load(t, testdata(strings.Split(tc.old, "/")...))
			b := load(t, testdata(strings.Split(tc.new, "/")...))
			d := lockdiff.Compare(a, b)
			golden(t, tc.name+".md", d.Markdown())
			golden(t, tc.name+".json", asJSON(t, d))
			if d.Empty() {
				t.Errorf("Compare() is empty")
			}
		})
	}
}

func TestCompareSame(t *testing.T) {
	l := load(t, testdata("golden", "5.0", "full-x86_64", "compose.lock.json"))
	d := lockdiff.Compare(l, l)
	if !d.Empty() || !strings.HasSuffix(string(d.Markdown()), "\nNo changes.\n") {
		t.Errorf("Compare(l, l):\n%s", d.Markdown())
	}
}

// The footprint section may be spelled differently while issue 4 settles
// it; both spellings read the same.
func TestFootprintSpellings(t *testing.T) {
	a := load(t, testdata("lockdiff", "full-footprint.lock.json"))
	b := load(t, testdata("lockdiff", "full-footprint-alt.lock.json"))
	if a.Footprint == nil || b.Footprint == nil {
		t.Fatalf("footprints: %+v / %+v (%s)", a.Footprint, b.Footprint, b.FootprintNote)
	}
	if fmt.Sprint(a.Footprint.Total, a.Footprint.Components) != fmt.Sprint(b.Footprint.Total, b.Footprint.Components) {
		t.Errorf("the two spellings differ:\n%+v %+v\n%+v %+v", *a.Footprint.Total, a.Footprint.Components, *b.Footprint.Total, b.Footprint.Components)
	}
	if d := lockdiff.Compare(a, b); !d.Empty() {
		t.Errorf("Compare(same footprint, two spellings) is not empty:\n%s", d.Markdown())
	}
	if a.Footprint.Components["core"].Unique != 529*1024*1024+5 {
		t.Errorf("core unique bytes = %d", a.Footprint.Components["core"].Unique)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"not JSON", "{\n  \"schema\": 1,\n  oops\n}", "l.json: line 3, column 4: invalid JSON: invalid character 'o' looking for beginning of object key string"},
		{"a list", `[1]`, "l.json: not a compose.lock.json: json: cannot unmarshal array into Go value of type map[string]json.RawMessage"},
		{"a release file", `{"release": {"base": "4.18.0"}, "images": {}}`, `l.json: not a compose.lock.json: no "schema" field`},
		{"newer schema", `{"schema": 2}`, "l.json: lock schema 2; this version reads schema 1"},
		{"schema not a number", `{"schema": "1"}`, `l.json: schema must be a number, got "1"`},
		{"wrong type", `{"schema": 1, "components": {"core": {}}}`, "l.json: components must be []plan.Component, got object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := lockdiff.Parse("l.json", []byte(tc.data))
			if err == nil || err.Error() != tc.want {
				t.Errorf("Parse() = %v\nwant %s", err, tc.want)
			}
		})
	}
	if _, err := lockdiff.Load(testdata("lockdiff", "nope.json")); err == nil || err.Error() != "reading lock file ../../testdata/lockdiff/nope.json: no such file or directory" {
		t.Errorf("Load(missing) = %v", err)
	}
}
