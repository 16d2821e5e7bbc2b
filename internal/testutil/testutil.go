// Package testutil finds the files tests read: the module root, its
// testdata, and the shared upstream reference files (MicroShift release and
// config files) that live beside the repository in ../shared, a real
// docker-registry for tests, and synthetic images to push to it. Test and
// bench code only.
package testutil

import (
	"errors"
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

// Shared returns the shared reference directory joined with elem, failing
// the test when it is missing: these are real upstream files, never
// skipped. It is $MICROSHIFT_COMPOSE_SHARED when set, else ../shared beside
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
	t.Fatalf("shared reference files %s not found in %s (set %s to the directory holding reference/)",
		filepath.Join(elem...), strings.Join(candidates, " or "), SharedEnv)
	return ""
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
