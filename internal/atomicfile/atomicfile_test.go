package atomicfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/atomicfile"
)

func write(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // WriteFile's mode is masked by umask
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// leftovers lists temporary files WriteAll could leave behind.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// A symlink where a file is to be written is refused, naming it, and
// nothing of the set is written.
func TestWriteAllRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	a, outside := filepath.Join(dir, "a.json"), filepath.Join(t.TempDir(), "outside.json")
	write(t, a, "old a", 0o640)
	write(t, outside, "outside", 0o600)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	err := atomicfile.WriteAll([]atomicfile.File{
		{Path: a, Data: []byte("new a")},
		{Path: link, Data: []byte("new b")},
	})
	if !errors.Is(err, atomicfile.ErrSymlink) || !strings.Contains(err.Error(), link+" is a symlink (to "+outside+")") {
		t.Fatalf("WriteAll() = %v, want a refusal naming %s", err, link)
	}
	if got := read(t, a); got != "old a" {
		t.Errorf("a.json = %q, want it untouched", got)
	}
	if got := read(t, outside); got != "outside" {
		t.Errorf("the file the link names = %q, want it untouched", got)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestWriteAllKeepsMode(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "new.json")
	write(t, a, "old a", 0o640)
	write(t, b, "old b", 0o600)
	err := atomicfile.WriteAll([]atomicfile.File{
		{Path: a, Data: []byte("new a")},
		{Path: b, Data: []byte("new b")},
		{Path: c, Data: []byte("new c"), Mode: 0o644},
	})
	if err != nil {
		t.Fatalf("WriteAll() = %v", err)
	}
	for _, tc := range []struct {
		path, data string
		mode       os.FileMode
	}{{a, "new a", 0o640}, {b, "new b", 0o600}, {c, "new c", 0o644}} {
		st, err := os.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := read(t, tc.path); got != tc.data || st.Mode().Perm() != tc.mode {
			t.Errorf("%s = %q mode %04o, want %q mode %04o", filepath.Base(tc.path), got, st.Mode().Perm(), tc.data, tc.mode)
		}
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// A read-only target fails the whole set before anything is replaced, with
// one line that names the file and the fix; no temporary file is left.
func TestWriteAllReadOnlyWritesNothing(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	write(t, a, "old a", 0o644)
	write(t, b, "old b", 0o444)
	err := atomicfile.WriteAll([]atomicfile.File{{Path: a, Data: []byte("new a")}, {Path: b, Data: []byte("new b")}})
	want := b + ": file is read-only (mode 0444); make it writable (chmod u+w) to update it"
	if err == nil || err.Error() != want {
		t.Fatalf("WriteAll() = %v, want %q", err, want)
	}
	if !errors.Is(err, atomicfile.ErrReadOnly) {
		t.Errorf("WriteAll() error does not wrap ErrReadOnly")
	}
	if read(t, a) != "old a" || read(t, b) != "old b" {
		t.Errorf("files changed: a=%q b=%q", read(t, a), read(t, b))
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing", "x.json")
	for _, tc := range []struct{ path, want string }{
		{sub, sub + " is not a regular file"},
		{missing, "writing " + missing + ": no such file or directory"},
	} {
		if err := atomicfile.Write(tc.path, []byte("x"), 0o644); err == nil || err.Error() != tc.want {
			t.Errorf("Write(%s) = %v, want %q", tc.path, err, tc.want)
		}
	}
}
