package testutil

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// ToolCacheEnv overrides where pinned Go tools are cached
// (hack/tool.sh; default ~/.cache/microshift-compose/tools).
const ToolCacheEnv = "MICROSHIFT_COMPOSE_TOOL_CACHE"

// toolBuild is one hack/tool.sh run of a test binary: the first test
// that needs a tool runs it, the others wait for its result.
type toolBuild struct {
	done chan struct{}
	path string
	err  error
}

var (
	toolBuildsMu sync.Mutex
	toolBuilds   = map[string]*toolBuild{}
)

// GoTool returns a Go program a test runs, built from the Go module proxy
// at the pinned version (`go install pkg@version`, without the module's
// build tags) once per machine into the shared tool cache (hack/tool.sh).
// A build failure fails the test: the tool is part of the suite.
func GoTool(t testing.TB, pkg, version string) string {
	t.Helper()
	p, err := tool(t, "go", pkg, version)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ModuleTool returns a program built from a Go module of this repository
// that has a go.mod of its own (hack/<name>: test-only tools whose
// dependencies the main module must not take), built into the shared tool
// cache once per content of its directory (hack/tool.sh).
func ModuleTool(t testing.TB, dir string) string {
	t.Helper()
	p, err := tool(t, "module", dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// pinnedTool is a Go program the Makefile pins and the build tags its
// authors build it with.
type pinnedTool struct{ pkg, tags string }

// pinnedTools are the Go tools the Makefile pins with NAME_VERSION
// (COSIGN_VERSION, ...) and `make test-tools` prebuilds into bin/.
var pinnedTools = map[string]pinnedTool{
	"cosign":     {pkg: "github.com/sigstore/cosign/v2/cmd/cosign"},
	"helm":       {pkg: "helm.sh/helm/v3/cmd/helm"},
	"goreleaser": {pkg: "github.com/goreleaser/goreleaser/v2"},
	// opm reads and checks file-based operator catalogs: the consumer
	// the operators tests check filtered catalogs with. Built with
	// operator-registry's own tags (containers/image without gpgme).
	"opm": {pkg: "github.com/operator-framework/operator-registry/cmd/opm", tags: OpmTags},
}

// OpmTags are the build tags operator-registry builds opm with (its
// Makefile's), which `make test-tools` passes too.
const OpmTags = "json1,netgo,osusergo,containers_image_openpgp"

// PinnedTool returns cosign, helm, goreleaser or opm at the version the
// Makefile pins (its NAME_VERSION, which `make test` exports; `go test` by
// hand reads the Makefile's default), built into the shared tool cache by
// the first test that needs it (hack/tool.sh), so that on a fresh machine
// the tool builds while other packages test instead of before all of
// them. The build's progress ("still building goreleaser v2.12.0 (30 s)")
// is the test's log as it happens, which hack/testprogress shows. A tool
// that cannot be built fails the test with CI set and skips it elsewhere
// (no network, say).
func PinnedTool(t testing.TB, name string) string {
	t.Helper()
	pt, ok := pinnedTools[name]
	if !ok {
		t.Fatalf("%s is not a pinned tool", name)
	}
	version, err := pinnedVersion(Root(t), name)
	if err == nil {
		args := []string{"go", pt.pkg, version}
		if pt.tags != "" {
			args = append(args, pt.tags)
		}
		var p string
		if p, err = tool(t, args...); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal(err)
	}
	t.Skipf("%s is not available: %v", name, firstLine(err))
	return ""
}

// pinnedVersion is $NAME_VERSION, else the Makefile's `NAME_VERSION ?= v`.
func pinnedVersion(root, name string) (string, error) {
	v := strings.ToUpper(name) + "_VERSION"
	if s := os.Getenv(v); s != "" {
		return s, nil
	}
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return "", fmt.Errorf("reading the pinned version of %s: %w", name, err)
	}
	m := regexp.MustCompile(`(?m)^` + v + `\s*\?=\s*(\S+)\s*$`).FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("reading the pinned version of %s: Makefile has no %s ?= line", name, v)
	}
	return string(m[1]), nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// tool runs hack/tool.sh once per tool and test binary; tests that need
// a tool another test is building wait for it. The building test logs
// hack/tool.sh's progress lines as they come.
func tool(t testing.TB, args ...string) (string, error) {
	t.Helper()
	key := strings.Join(args, " ")
	toolBuildsMu.Lock()
	b, waiting := toolBuilds[key]
	if !waiting {
		b = &toolBuild{done: make(chan struct{})}
		toolBuilds[key] = b
	}
	toolBuildsMu.Unlock()
	if waiting {
		select {
		case <-b.done:
		default:
			t.Logf("waiting for hack/tool.sh %s (another test builds it)", key)
			<-b.done
		}
		return b.path, b.err
	}
	defer close(b.done)
	b.path, b.err = runToolScript(t, Root(t), args)
	return b.path, b.err
}

func runToolScript(t testing.TB, root string, args []string) (string, error) {
	key := strings.Join(args, " ")
	cmd := exec.Command(filepath.Join(root, "hack", "tool.sh"), args...)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("running hack/tool.sh %s: %w", key, err)
	}
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			t.Logf("hack/tool.sh: %s", sc.Text())
		}
		io.Copy(io.Discard, pr)
	}()
	err := cmd.Wait()
	pw.Close()
	<-logged
	if err != nil {
		// The last line first (go's error, for a skip's one line),
		// then the whole log.
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		return "", fmt.Errorf("hack/tool.sh %s: %w: %s\n%s", key, err, lines[len(lines)-1], stderr.String())
	}
	bin := strings.TrimSpace(stdout.String())
	st, err := os.Stat(bin)
	if err == nil && !st.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err != nil {
		return "", fmt.Errorf("hack/tool.sh %s printed %q, not a program (%v)", key, bin, err)
	}
	return bin, nil
}
