// Package testutil finds the files tests read: the module root, its
// testdata, and the shared upstream reference files (MicroShift release and
// config files) that live beside the repository in ../shared, a real
// docker-registry for tests, and synthetic images to push to it. Test and
// bench code only.
package testutil

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// SharedEnv overrides where the shared reference files are, for checkouts
// that do not sit beside ../shared.
const SharedEnv = "MICROSHIFT_COMPOSE_SHARED"

// ModuleRoot returns the directory holding go.mod above the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Root is ModuleRoot for tests.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := ModuleRoot()
	if err != nil {
		t.Fatalf("finding the module root: %v", err)
	}
	return dir
}

// Shared returns the shared reference directory joined with elem. When it
// is missing the test is skipped with one line saying where the files go
// (a user's clone has no ../shared), except in CI (CI set), where that is a
// failure: these are real upstream files. It is $MICROSHIFT_COMPOSE_SHARED when set, else ../shared beside
// the module root, else ../shared beside the repository this checkout was
// cloned from (a clone in /tmp of a checkout that sits beside ../shared).
func Shared(t testing.TB, elem ...string) string {
	t.Helper()
	var candidates []string
	if env := os.Getenv(SharedEnv); env != "" {
		candidates = []string{env}
	} else {
		root := Root(t)
		candidates = append(candidates, filepath.Join(root, "..", "shared"))
		if origin := cloneOrigin(root); origin != "" {
			candidates = append(candidates, filepath.Join(origin, "..", "shared"))
		}
		if main := mainWorktree(root); main != "" && main != root {
			candidates = append(candidates, filepath.Join(main, "..", "shared"))
		}
	}
	for _, base := range candidates {
		p := filepath.Join(append([]string{base}, elem...)...)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	// The same words for every test, so that make test's summary says
	// them once for all the tests they skip.
	msg := fmt.Sprintf("needs the upstream reference files: put the shared directory (holding reference/) beside the repository as ../shared, or set %s",
		SharedEnv)
	if os.Getenv("CI") != "" {
		// In CI the reference files are part of the checkout: missing
		// ones are a failure, never a skip.
		t.Fatalf("%s (%s: looked in %s)", msg, filepath.Join(elem...), strings.Join(candidates, " or "))
	}
	t.Logf("missing %s", filepath.Join(elem...))
	t.Skip(msg)
	return ""
}

// HaveShared reports whether the shared reference files are reachable,
// for code that must decide before a test starts (benchmarks, fuzz seeds).
func HaveShared() bool {
	root, err := ModuleRoot()
	if err != nil {
		return false
	}
	if env := os.Getenv(SharedEnv); env != "" {
		_, err := os.Stat(filepath.Join(env, "reference"))
		return err == nil
	}
	bases := []string{filepath.Join(root, "..", "shared")}
	if origin := cloneOrigin(root); origin != "" {
		bases = append(bases, filepath.Join(origin, "..", "shared"))
	}
	for _, base := range bases {
		if _, err := os.Stat(filepath.Join(base, "reference")); err == nil {
			return true
		}
	}
	return false
}

// cloneOrigin returns the local directory the checkout at root was cloned
// from, or "" when its origin is not a local path.
func cloneOrigin(root string) string {
	out, err := exec.Command("git", "-C", root, "config", "--get", "remote.origin.url").Output()
	if err != nil {
		return ""
	}
	origin := strings.TrimPrefix(strings.TrimSpace(string(out)), "file://")
	if !filepath.IsAbs(origin) {
		return ""
	}
	if st, err := os.Stat(origin); err != nil || !st.IsDir() {
		return ""
	}
	return origin
}

// ReleaseDir is one of the upstream MicroShift release directories ("main"
// for 5.0, "release-4.18"), laid out as the microshift-release-info RPMs
// install them.
func ReleaseDir(t testing.TB, branch string) string {
	t.Helper()
	return Shared(t, "reference", "microshift-release", branch)
}

// mainWorktree returns the main working tree of the repository root
// belongs to, so that a checkout made with `git worktree add` elsewhere
// finds ../shared beside it; "" when git cannot tell.
func mainWorktree(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--path-format=absolute", "--git-common-dir").Output()
	if err != nil {
		return ""
	}
	common := strings.TrimSpace(string(out))
	if filepath.Base(common) != ".git" {
		return ""
	}
	return filepath.Dir(common)
}

// SkipReleaseEnv names the variable that skips the release tests (the
// goreleaser snapshot, the container image: minutes of builds) on a
// developer's machine. CI (CI set) runs them whatever it says.
const SkipReleaseEnv = "MICROSHIFT_COMPOSE_SKIP_RELEASE"

// ReleaseTest skips a test that builds the tool's release (archives,
// packages, container images) when SkipReleaseEnv is set outside CI.
func ReleaseTest(t testing.TB) {
	t.Helper()
	if os.Getenv(SkipReleaseEnv) == "" {
		return
	}
	if os.Getenv("CI") != "" {
		t.Logf("%s is set, but CI runs the release tests", SkipReleaseEnv)
		return
	}
	t.Skipf("%s is set: the release build is not tested here (CI tests it)", SkipReleaseEnv)
}

// NeedTool returns the path of a program a test runs; a missing one fails
// the test, naming the Debian package (`make test` installs it).
func NeedTool(t testing.TB, name, debianPackage string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed (Debian package %s; `make test` installs it): %v", name, debianPackage, err)
	}
	return p
}

// MarkdownCells counts the cells of a Markdown table row: the pipes that
// are not escaped.
func MarkdownCells(row string) int {
	n := 0
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}

// MarkupOutsideCode returns the first character of md, outside code spans
// and not escaped with a backslash, that can start HTML, a link or a code
// span ("<", "[", "`"), with its context; "" when there is none. Code
// spans are read as CommonMark reads them: a run of n backticks up to the
// next run of exactly n.
func MarkupOutsideCode(md string) string {
	for i := 0; i < len(md); i++ {
		switch c := md[i]; {
		case c == '\\':
			i++
		case c == '`':
			n := 0
			for i+n < len(md) && md[i+n] == '`' {
				n++
			}
			end := -1
			for j := i + n; j < len(md); {
				if md[j] != '`' {
					j++
					continue
				}
				m := 0
				for j+m < len(md) && md[j+m] == '`' {
					m++
				}
				if m == n {
					end = j
					break
				}
				j += m
			}
			if end < 0 {
				return md[i:min(len(md), i+40)]
			}
			i = end + n - 1
		case c == '<' || c == '[':
			return md[max(0, i-20):min(len(md), i+20)]
		}
	}
	return ""
}

// ReadFile reads path, failing the test on error.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// WriteFile writes data to path (0644), creating its directory, failing
// the test on error.
func WriteFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestdataDir is a path under the module's top-level testdata directory,
// relative to the test's package directory, so that paths in error
// messages are the same on every machine.
func TestdataDir(t testing.TB, elem ...string) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, filepath.Join(Root(t), "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(append([]string{rel}, elem...)...)
}

// Lines splits a newline-terminated file into its lines.
func Lines(data []byte) []string {
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
