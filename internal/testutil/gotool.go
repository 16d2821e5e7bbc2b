package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// goToolMu serialises tool builds: two tests asking for one tool build it
// once.
var goToolMu sync.Mutex

// GoTool returns a Go program a test runs, built once into
// <module root>/bin/tools/<name>-<version> from the Go module proxy at the
// pinned version (`go install pkg@version`, without the module's build
// tags). A build failure fails the test: the tool is part of the suite.
func GoTool(t testing.TB, pkg, version string) string {
	t.Helper()
	bin := filepath.Join(Root(t), "bin", "tools", filepath.Base(pkg)+"-"+version)
	return buildTool(t, bin, func(gobin string) *exec.Cmd {
		cmd := exec.Command("go", "install", pkg+"@"+version)
		cmd.Env = append(toolEnv(), "GOBIN="+gobin)
		return cmd
	}, filepath.Base(pkg))
}

// ModuleTool returns a program built from a Go module of this repository
// that has a go.mod of its own (hack/<name>: test-only tools whose
// dependencies the main module must not take), built once per checkout
// into <module root>/bin/tools/<name>.
func ModuleTool(t testing.TB, dir string) string {
	t.Helper()
	root := Root(t)
	bin := filepath.Join(root, "bin", "tools", filepath.Base(dir))
	return buildTool(t, bin, func(gobin string) *exec.Cmd {
		cmd := exec.Command("go", "build", "-o", filepath.Join(gobin, filepath.Base(dir)), ".")
		cmd.Dir = filepath.Join(root, dir)
		cmd.Env = toolEnv()
		return cmd
	}, filepath.Base(dir))
}

// buildTool builds bin with cmd (given the directory to put it in) unless
// it is there. Module tools are rebuilt when their sources are newer.
func buildTool(t testing.TB, bin string, cmd func(gobin string) *exec.Cmd, name string) string {
	t.Helper()
	goToolMu.Lock()
	defer goToolMu.Unlock()
	if st, err := os.Stat(bin); err == nil && st.Mode().IsRegular() && !staleModuleTool(bin, cmd("").Dir, st.ModTime().UnixNano()) {
		return bin
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(bin), ".tool-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	c := cmd(tmp)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("building %s (%s): %v\n%s", name, strings.Join(c.Args, " "), err, out)
	}
	if err := os.Rename(filepath.Join(tmp, name), bin); err != nil {
		t.Fatalf("installing %s: %v", name, err)
	}
	return bin
}

// staleModuleTool reports whether a module tool's sources (dir, "" for a
// proxy tool) changed after it was built at built.
func staleModuleTool(bin, dir string, built int64) bool {
	if dir == "" {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return true
	}
	for _, e := range entries {
		if info, err := e.Info(); err != nil || info.ModTime().UnixNano() > built {
			return true
		}
	}
	return false
}

// toolEnv is the environment tool builds run in: without the module's
// build tags (GOFLAGS) and workspace, so the tool builds as its authors do.
func toolEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GOFLAGS=") || strings.HasPrefix(kv, "GOWORK=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GOFLAGS=", "GOWORK=off")
}
