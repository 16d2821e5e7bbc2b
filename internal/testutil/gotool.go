package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// ToolCacheEnv overrides where pinned Go tools are cached
// (hack/tool.sh; default ~/.cache/microshift-compose/tools).
const ToolCacheEnv = "MICROSHIFT_COMPOSE_TOOL_CACHE"

// goToolMu serialises tool builds within a test binary; hack/tool.sh
// serialises them across processes.
var goToolMu sync.Mutex

// GoTool returns a Go program a test runs, built from the Go module proxy
// at the pinned version (`go install pkg@version`, without the module's
// build tags) once per machine into the shared tool cache (hack/tool.sh).
// A build failure fails the test: the tool is part of the suite.
func GoTool(t testing.TB, pkg, version string) string {
	t.Helper()
	return tool(t, "go", pkg, version)
}

// ModuleTool returns a program built from a Go module of this repository
// that has a go.mod of its own (hack/<name>: test-only tools whose
// dependencies the main module must not take), built into the shared tool
// cache once per content of its directory (hack/tool.sh).
func ModuleTool(t testing.TB, dir string) string {
	t.Helper()
	return tool(t, "module", dir)
}

func tool(t testing.TB, args ...string) string {
	t.Helper()
	goToolMu.Lock()
	defer goToolMu.Unlock()
	root := Root(t)
	cmd := exec.Command(filepath.Join(root, "hack", "tool.sh"), args...)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hack/tool.sh %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("hack/tool.sh %s:\n%s", strings.Join(args, " "), strings.TrimSpace(stderr.String()))
	}
	bin := strings.TrimSpace(stdout.String())
	if st, err := os.Stat(bin); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("hack/tool.sh %s printed %q, not a program (%v)", strings.Join(args, " "), bin, err)
	}
	return bin
}
