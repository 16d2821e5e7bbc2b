package components

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDecodeComponent feeds component.toml documents to the decoder and,
// when they decode, to the component's own validation: no panics, and every
// error one line that names the file.
func FuzzDecodeComponent(f *testing.F) {
	seed := func(data []byte) { f.Add(data) }
	err := fs.WalkDir(embedded, "data/components", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != componentFile {
			return err
		}
		data, err := fs.ReadFile(embedded, p)
		seed(data)
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	paths, _ := filepath.Glob("testdata/*/*/components/*/component.toml")
	more, _ := filepath.Glob("testdata/overlay/components/*/component.toml")
	for _, p := range append(paths, more...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		seed(data)
	}
	f.Add([]byte("name = \"a\"\norder = 1\n[config.selected]\n\"x\\ny\" = [{a = 1}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const display = "fuzz/components/x/component.toml"
		c, err := decodeComponent(display, data)
		if err != nil {
			checkErr(t, err.Error(), display)
			return
		}
		if c.Name == "" || c.Source != display {
			t.Fatalf("decoded a component with name %q, source %q", c.Name, c.Source)
		}
		cat := &Catalog{
			Components:   map[string]*Component{c.Name: c},
			Capabilities: map[string]*Capability{},
			Profiles:     map[string]*Profile{},
		}
		for _, p := range cat.Problems() {
			checkErr(t, p.Error(), display)
		}
	})
}

func checkErr(t *testing.T, msg, display string) {
	t.Helper()
	if strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("error is not one line: %q", msg)
	}
	if !strings.HasPrefix(msg, display+": ") {
		t.Fatalf("error does not start with %q: %q", display+": ", msg)
	}
}

// FuzzDecodeCatalog feeds catalog.toml documents (capabilities and
// profiles) to the decoder and the catalog's validation: no panics, every
// error one line that names the file.
func FuzzDecodeCatalog(f *testing.F) {
	data, err := fs.ReadFile(embedded, "data/"+catalogFile)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte("[profiles.a]\ndescription = \"x\"\ncomponents = [\"core\", \"core\"]\n[capabilities.\"b\\nc\"]\ndefault = \"z\"\n"))
	f.Add([]byte("[profiles]\na = 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const display = "fuzz/catalog.toml"
		p := &parts{components: map[string]*Component{}, capabilities: map[string]*Capability{}, profiles: map[string]*Profile{}}
		if err := p.decodeCatalog(display, data); err != nil {
			checkErr(t, err.Error(), display)
			return
		}
		cat := &Catalog{Components: p.components, Capabilities: p.capabilities, Profiles: p.profiles}
		for _, e := range cat.Problems() {
			checkErr(t, e.Error(), display)
		}
	})
}
