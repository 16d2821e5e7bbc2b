package inputfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(small, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, 11), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Read("config", small, 10); err != nil || string(got) != "a: 1\n" {
		t.Errorf("Read(small) = %q, %v", got, err)
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "nope"), "config " + filepath.Join(dir, "nope") + " does not exist"},
		{dir, "config " + dir + " is not a regular file (a directory)"},
		{big, big + ": file is larger than 10 bytes"},
	} {
		if _, err := Read("config", tc.path, 10); err == nil || err.Error() != tc.want {
			t.Errorf("Read(%s) = %v, want %q", tc.path, err, tc.want)
		}
	}
	unreadable := filepath.Join(dir, "unreadable")
	if err := os.WriteFile(unreadable, []byte("x"), 0o000); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 { // root reads it anyway
		if _, err := Read("config", unreadable, 10); err == nil || err.Error() != "reading config "+unreadable+": permission denied" {
			t.Errorf("Read(unreadable) = %v", err)
		}
	}
}

// mkfifo makes a named pipe nobody writes to: opening it for reading the
// ordinary way blocks forever.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatalf("mkfifo %s: %v", path, err)
	}
}

func TestReadRefusesWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, "config " + fifo + " is not a regular file (a named pipe)"},
		{link, "config " + link + " is not a regular file (a named pipe)"},
		{sock, "config " + sock + " is not a regular file (a socket)"},
		{"/dev/zero", "config /dev/zero is not a regular file (a character device)"},
	} {
		done := make(chan error, 1)
		go func() { _, err := Read("config", tc.path, 10); done <- err }()
		select {
		case err := <-done:
			if err == nil || err.Error() != tc.want || !errors.Is(err, ErrNotRegular) {
				t.Errorf("Read(%s) = %v, want %q", tc.path, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Read(%s) blocked", tc.path)
		}
	}
}

func TestDir(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "shadow")
	writeFile(t, secret, "root:$6$planted-secret\n")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "comp", "files", "a.conf"), "a\n")
	writeFile(t, filepath.Join(dir, "comp", "big"), strings.Repeat("x", 100))
	writeFile(t, filepath.Join(dir, "other", "b.conf"), "b\n")
	symlink(t, "a.conf", filepath.Join(dir, "comp", "files", "inside.conf"))
	symlink(t, secret, filepath.Join(dir, "comp", "files", "abs.conf"))
	symlink(t, "../../other/b.conf", filepath.Join(dir, "comp", "files", "sibling.conf"))
	symlink(t, "../../../"+filepath.Base(outside)+"/shadow", filepath.Join(dir, "comp", "files", "rel.conf"))
	symlink(t, outside, filepath.Join(dir, "comp", "outdir"))
	symlink(t, "loop", filepath.Join(dir, "comp", "loop"))
	mkfifo(t, filepath.Join(dir, "comp", "fifo"))

	root, err := Dir(dir)
	if err != nil {
		t.Fatal(err)
	}
	comp, err := fs.Sub(root, "comp")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFS(comp, "files/inside.conf", 10); err != nil || string(data) != "a\n" {
		t.Errorf("ReadFS(inside symlink) = %q, %v", data, err)
	}
	// From the catalog root the sibling is inside; from the component it
	// is not.
	if data, err := ReadFS(root, "comp/files/sibling.conf", 10); err != nil || string(data) != "b\n" {
		t.Errorf("ReadFS(root, sibling) = %q, %v", data, err)
	}
	for _, tc := range []struct {
		name, want string
		is         error
	}{
		{"files/abs.conf", "open files/abs.conf: symlink to " + secret + ", outside the directory it is read from", ErrOutsideRoot},
		{"files/rel.conf", "open files/rel.conf: symlink to ../../../" + filepath.Base(outside) + "/shadow, outside the directory it is read from", ErrOutsideRoot},
		{"files/sibling.conf", "open files/sibling.conf: symlink to ../../other/b.conf, outside the directory it is read from", ErrOutsideRoot},
		{"outdir/shadow", "open outdir/shadow: resolves outside the directory it is read from (through a symlink or ..)", ErrOutsideRoot},
		{"fifo", "open fifo: not a regular file (a named pipe)", ErrNotRegular},
		{"big", "read big: file is larger than 10 bytes", ErrTooLarge},
		{"loop", "open loop: too many levels of symlinks", nil},
		{"../other/b.conf", "open ../other/b.conf: invalid argument", fs.ErrInvalid},
	} {
		done := make(chan error, 1)
		go func() {
			data, err := ReadFS(comp, tc.name, 10)
			if bytes.Contains(data, []byte("planted-secret")) {
				err = errors.New("read the secret")
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || err.Error() != tc.want || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Errorf("ReadFS(%s) = %v, want %q", tc.name, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadFS(%s) blocked", tc.name)
		}
	}
	if _, err := fs.Sub(root, "comp/outdir"); err == nil || !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("Sub(symlink outside) = %v, want it refused", err)
	}
	// WalkDir lists the symlinks as symlinks; Stat follows only those that
	// stay inside.
	var seen []string
	if err := fs.WalkDir(comp, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		seen = append(seen, p)
		return nil
	}); err != nil {
		t.Fatalf("WalkDir = %v", err)
	}
	if want := "., big, fifo, files, files/a.conf, files/abs.conf, files/inside.conf, files/rel.conf, files/sibling.conf, loop, outdir"; strings.Join(seen, ", ") != want {
		t.Errorf("WalkDir saw %s, want %s", strings.Join(seen, ", "), want)
	}
}

func TestCheckYAML(t *testing.T) {
	var bomb strings.Builder
	bomb.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		fmt.Fprintf(&bomb, "%s: &%s [%s]\n", n, n, strings.TrimSuffix(strings.Repeat("*"+prev+",", 9), ","))
		prev = n
	}
	for _, tc := range []struct {
		name, data, want string
	}{
		{"no aliases", "a: 1\nb: [1, 2]\n", ""},
		{"merge key", "base: &b {x: 1, y: 2}\none:\n  <<: *b\n  z: 3\ntwo:\n  <<: *b\n", ""},
		{"anchors used a few times", "l: &l {app: x, tier: y}\na: *l\nb: *l\nc: *l\n", ""},
		{"not YAML", "a: [\n*", ""},
		{"alias bomb", bomb.String(), "document 1: excessive YAML aliasing: 72 aliases expand its 101 nodes to more than 11010; refused before any YAML library expands them"},
		{"bomb in a later document", "a: 1\n---\n" + bomb.String(), "document 2: excessive YAML aliasing: 72 aliases expand its 101 nodes to more than 11010; refused before any YAML library expands them"},
		{"alias cycle", "a: &a [*a]\n", "document 1: excessive YAML aliasing (an anchor refers to itself)"},
	} {
		err := CheckYAML([]byte(tc.data))
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.Is(err, ErrYAMLAliases) {
				t.Errorf("%s: CheckYAML error does not wrap ErrYAMLAliases", tc.name)
			}
		}
		if got != tc.want {
			t.Errorf("%s: CheckYAML = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// FuzzCheckYAML: CheckYAML never panics or hangs, and what it accepts
// expands to a bounded size when a YAML library decodes it (aliases and
// all): at most the limit's nodes, which JSON writes in bounded bytes.
func FuzzCheckYAML(f *testing.F) {
	f.Add([]byte("a: &a [1, 2]\nb: *a\n"))
	f.Add([]byte("base: &b {x: 1}\nm:\n  <<: *b\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"))
	f.Add([]byte("---\n- &x y\n---\n- *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := CheckYAML(data); err != nil {
			if !errors.Is(err, ErrYAMLAliases) && !errors.Is(err, ErrStructure) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("CheckYAML error %q is not one line wrapping ErrYAMLAliases or ErrStructure", err)
			}
			return
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var v any
			if err := dec.Decode(&v); err != nil {
				return
			}
			out, err := json.Marshal(v)
			if err != nil {
				continue // maps with non-string keys
			}
			limit := (int64(len(data))*MaxYAMLExpansionFactor + MaxYAMLExpansionSlack) * int64(len(data)+16)
			if int64(len(out)) > limit {
				t.Fatalf("accepted %d bytes of YAML that expand to %d bytes of JSON", len(data), len(out))
			}
		}
	})
}

func TestCheckYAMLKeys(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"a: 1\nb: 2\n", ""},
		{"0: 0\n.0: \n", `duplicate key "0" (written as 0 and 0e+00)`},
		{"\"1\": a\n1: b\n", `duplicate key "1" (written as "1" and 1)`},
		{"true: a\n\"true\": b\n", `duplicate key "true" (written as true and "true")`},
		{"true: a\non: b\n", ""}, // both YAML 1.1 true: the conversion's own error
		{"network:\n  x: 1\n  z: [ {10: a, 1e1: b} ]\n", `network: z: [0]: duplicate key "10" (written as 10 and 1e+01)`},
		{"a: 1\na: 2\n", ""},    // the conversion's own error, with its line
		{"a: [\n", ""},          // does not parse: the conversion says so
		{"- 1\n- {0: a}\n", ""}, // not a mapping at the top
	} {
		err := CheckYAMLKeys([]byte(tc.data))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("CheckYAMLKeys(%q) = %q, want %q", tc.data, got, tc.want)
		}
	}
}
