package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/releases"
)

// hostileEnv is one hostile case's world: a directory for its inputs, a
// previous build's output that must come out untouched, and a planted
// secret (outside every input) whose bytes must reach no output.
type hostileEnv struct {
	t   *testing.T
	dir string
	// out holds a previous successful build.
	out string
	// secret is the planted file; token its content.
	secret, token string
}

var (
	baselineOnce sync.Once
	baselineDir  string
	baselineErr  error
)

// baseline builds, once, the output every case starts from: a build of
// profile minimal with the embedded catalog and release.
func baseline(t *testing.T) string {
	t.Helper()
	baselineOnce.Do(func() {
		dir, err := os.MkdirTemp("", "microshift-compose-hostile-baseline-")
		if err != nil {
			baselineErr = err
			return
		}
		baselineDir = filepath.Join(dir, "out")
		var out, errOut bytes.Buffer
		if code := run(t.Context(), []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", baselineDir}, &out, &errOut); code != exitOK {
			baselineErr = fmt.Errorf("baseline build: exit %d: %s", code, errOut.String())
		}
	})
	if baselineErr != nil {
		t.Fatal(baselineErr)
	}
	return baselineDir
}

func newHostileEnv(t *testing.T) *hostileEnv {
	t.Helper()
	root := t.TempDir()
	h := &hostileEnv{t: t, dir: filepath.Join(root, "in"), out: filepath.Join(root, "out")}
	if err := os.MkdirAll(h.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyTree(t, baseline(t), h.out)
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h.token = "PLANTED-SECRET-" + hex.EncodeToString(b)
	h.secret = filepath.Join(root, "secret", "shadow")
	h.write(h.secret, "root:"+h.token+":19000:0:99999:7:::\n")
	return h
}

// path returns the absolute path of rel inside the case's input directory
// (an absolute rel is kept).
func (h *hostileEnv) path(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(h.dir, rel)
}

func (h *hostileEnv) write(rel, data string) string {
	h.t.Helper()
	p := h.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *hostileEnv) exec(rel, script string) string {
	h.t.Helper()
	p := h.write(rel, script)
	if err := os.Chmod(p, 0o755); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *hostileEnv) mkdir(rel string) string {
	h.t.Helper()
	p := h.path(rel)
	if err := os.MkdirAll(p, 0o755); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// fifo makes a named pipe nobody writes to: a plain open for reading
// blocks forever.
func (h *hostileEnv) fifo(rel string) string {
	h.t.Helper()
	p := h.path(rel)
	h.mkdir(filepath.Dir(p))
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// socket makes a listening unix socket, closed when the case ends. It is
// bound at a short path (socket paths are limited to 108 bytes) and
// renamed into place.
func (h *hostileEnv) socket(rel string) string {
	h.t.Helper()
	p := h.path(rel)
	h.mkdir(filepath.Dir(p))
	short, err := os.MkdirTemp("", "mc-sock-")
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { os.RemoveAll(short) })
	l, err := net.Listen("unix", filepath.Join(short, "s"))
	if err != nil {
		h.t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	h.t.Cleanup(func() { l.Close() })
	if err := os.Rename(filepath.Join(short, "s"), p); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *hostileEnv) symlink(target, rel string) string {
	h.t.Helper()
	p := h.path(rel)
	h.mkdir(filepath.Dir(p))
	if err := os.Symlink(target, p); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// sparse makes a file of size bytes without writing them.
func (h *hostileEnv) sparse(rel string, size int64) string {
	h.t.Helper()
	p := h.write(rel, "")
	if err := os.Truncate(p, size); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// component writes catalog/components/<name>/component.toml: a valid
// component that requires core, with extra TOML appended.
func (h *hostileEnv) component(name, extra string) string {
	h.t.Helper()
	return h.write("catalog/components/"+name+"/component.toml", fmt.Sprintf(
		"name = %q\ndescription = \"a hostile test component\"\norder = 900\nrequires = [\"core\"]\n%s", name, extra))
}

// catalogDir is the case's --catalog.
func (h *hostileEnv) catalogDir() string { return h.path("catalog") }

// compDir is a component directory of the case's catalog.
func (h *hostileEnv) compDir(name string) string { return h.path("catalog/components/" + name) }

// plugin writes an executable plugin for component name that answers
// api-version and runs body for run.
func (h *hostileEnv) plugin(name, body string) string {
	h.t.Helper()
	h.component(name, "")
	return h.exec("catalog/components/"+name+"/plugin", "#!/bin/sh\n[ \"$1\" = api-version ] && { echo v1; exit 0; }\n"+body+"\n")
}

// pluginOutput is a plugin printing out.
func (h *hostileEnv) pluginOutput(name, out string) string {
	h.t.Helper()
	h.write("catalog/components/"+name+"/out.yaml", out)
	return h.plugin(name, "cat out.yaml")
}

// manifests writes a component with a manifests/ kustomization listing
// the given files, and the files.
func (h *hostileEnv) manifests(name string, files map[string]string) {
	h.t.Helper()
	h.component(name, "")
	var list []string
	for f, data := range files {
		h.write("catalog/components/"+name+"/manifests/"+f, data)
		if f != "kustomization.yaml" {
			list = append(list, f)
		}
	}
	if _, ok := files["kustomization.yaml"]; !ok {
		h.write("catalog/components/"+name+"/manifests/kustomization.yaml", "resources:\n- "+strings.Join(list, "\n- ")+"\n")
	}
}

// releaseDir writes the embedded release 5.0 as a release directory.
func (h *hostileEnv) releaseDir(rel string) string {
	h.t.Helper()
	rels, err := releases.Embedded()
	if err != nil {
		h.t.Fatal(err)
	}
	r, err := releases.Select(rels, "5.0")
	if err != nil {
		h.t.Fatal(err)
	}
	for _, f := range r.Files() {
		h.write(filepath.Join(rel, f.Name), string(f.Encode()))
	}
	return h.path(rel)
}

// lock writes the previous build's lock edited by edit (a string
// replacement old -> new, applied once and required to apply).
func (h *hostileEnv) lock(rel, old, new string) string {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join(h.out, "compose.lock.json"))
	if err != nil {
		h.t.Fatal(err)
	}
	s := string(data)
	if old != "" {
		if !strings.Contains(s, old) {
			h.t.Fatalf("lock edit: %q not in the lock", old)
		}
		s = strings.Replace(s, old, new, 1)
	}
	return h.write(rel, s)
}

// copyTree copies a directory tree of regular files.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copying %s: %v", src, err)
	}
}

// runGuarded runs the CLI in-process with a deadline and a panic guard: a
// hang (a named pipe opened the blocking way) or a panic fails the case
// instead of the whole test binary.
func runGuarded(t *testing.T, limit time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	type result struct {
		stdout, stderr string
		code           int
		panicked       any
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.panicked = p
			}
			done <- r
		}()
		var out, errOut bytes.Buffer
		r.code = run(t.Context(), args, &out, &errOut)
		r.stdout, r.stderr = out.String(), errOut.String()
	}()
	select {
	case r := <-done:
		if r.panicked != nil {
			t.Fatalf("run(%q) panicked: %v", args, r.panicked)
		}
		return r.stdout, r.stderr, r.code
	case <-time.After(limit):
		t.Fatalf("run(%q) did not finish within %s (blocked on an input?)", args, limit)
	}
	return "", "", 0
}

// inputs records the files of the case's input directory before the run,
// so that only what the run writes is searched for the secret.
func (h *hostileEnv) inputs() map[string]string {
	h.t.Helper()
	files := map[string]string{}
	_ = filepath.WalkDir(h.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				files[p] = info.ModTime().String() + fmt.Sprint(info.Size())
			}
		}
		return nil
	})
	return files
}

// secretHolders lists the outputs of a run that hold the planted secret:
// stdout, stderr, and every file under the case's root (not following
// symlinks) except the secret itself and the inputs as they were before.
func (h *hostileEnv) secretHolders(before map[string]string, outputs map[string]string) []string {
	h.t.Helper()
	var found []string
	for name, s := range outputs {
		if strings.Contains(s, h.token) {
			found = append(found, name)
		}
	}
	_ = filepath.WalkDir(filepath.Dir(h.out), func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == h.secret || !d.Type().IsRegular() {
			return nil
		}
		if stamp, ok := before[p]; ok {
			if info, err := d.Info(); err == nil && info.ModTime().String()+fmt.Sprint(info.Size()) == stamp {
				return nil
			}
		}
		data, err := os.ReadFile(p)
		if err == nil && bytes.Contains(data, []byte(h.token)) {
			found = append(found, p)
		}
		return nil
	})
	return found
}
