package main

import (
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra/doc"
)

// The CLI reference is generated here rather than by a hidden command, so
// that cobra/doc and its Markdown renderer (whose package initialisation
// every run of the tool would pay) stay out of the binary.
var updateDocs = flag.Bool("update-docs", false, "rewrite docs/cli from the commands (make docs)")

// genDocs writes the Markdown CLI reference of every command into dir.
func genDocs(t *testing.T, dir string) {
	t.Helper()
	root := newRootCmd(io.Discard, io.Discard)
	root.DisableAutoGenTag = true
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		t.Fatalf("writing the CLI reference: %v", err)
	}
}

// TestDocsUpToDate regenerates the CLI reference and compares it with the
// checked-in docs/cli, so that --help and the docs never drift; with
// -update-docs it rewrites docs/cli instead.
func TestDocsUpToDate(t *testing.T) {
	want := filepath.Join(root(t), "docs", "cli")
	if *updateDocs {
		if err := os.RemoveAll(want); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(want, 0o755); err != nil {
			t.Fatal(err)
		}
		genDocs(t, want)
		return
	}
	got := t.TempDir()
	genDocs(t, got)

	list := func(dir string) []string {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("reading %s: %v", dir, err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	gotNames, wantNames := list(got), list(want)
	if len(gotNames) == 0 {
		t.Fatal("docs generated no files")
	}
	stale := false
	for _, n := range gotNames {
		if !slices.Contains(wantNames, n) {
			t.Errorf("docs/cli/%s is missing", n)
			stale = true
			continue
		}
		g, _ := os.ReadFile(filepath.Join(got, n))
		w, _ := os.ReadFile(filepath.Join(want, n))
		if string(g) != string(w) {
			t.Errorf("docs/cli/%s is out of date", n)
			stale = true
		}
	}
	for _, n := range wantNames {
		if !slices.Contains(gotNames, n) {
			t.Errorf("docs/cli/%s is no longer generated", n)
			stale = true
		}
	}
	if stale {
		t.Errorf("the CLI reference in docs/cli does not match the commands: run `make docs` and commit the result")
	}
}

// TestNoCobraBelowCmd checks that the library packages do not depend on
// cobra: flags stay in cmd/, and the packages stay usable without it.
func TestNoCobraBelowCmd(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	cmd := exec.Command(gobin, "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`,
		"./compose/...", "./components/...", "./releases/...", "./blueprints/...", "./internal/...")
	cmd.Dir = root(t)
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false -tags="+buildTags, "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	lines := nonEmptyLines(string(out))
	if len(lines) < 5 {
		t.Fatalf("go list found only %d packages:\n%s", len(lines), out)
	}
	for _, l := range lines {
		fields := strings.Fields(l)
		for _, dep := range fields[1:] {
			if dep == "github.com/spf13/cobra" || strings.HasPrefix(dep, "github.com/spf13/cobra/") || dep == "github.com/spf13/pflag" {
				t.Errorf("package %s depends on %s; keep the CLI library in cmd/", fields[0], dep)
			}
		}
	}
}
