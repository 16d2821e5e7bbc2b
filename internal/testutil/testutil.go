// Package testutil finds the files tests read: the module root, its
// testdata, and the shared upstream reference files (MicroShift release and
// config files) that live beside the repository in ../shared, a real
// docker-registry for tests, and synthetic images to push to it. Test and
// bench code only.
package testutil

import (
	"errors"
	"os"
	"path/filepath"
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

// Shared returns the shared reference directory ($MICROSHIFT_COMPOSE_SHARED,
// or ../shared beside the module root) joined with elem, failing the test
// when it is missing: these are real upstream files, never skipped.
func Shared(t testing.TB, elem ...string) string {
	t.Helper()
	base := os.Getenv(SharedEnv)
	if base == "" {
		base = filepath.Join(Root(t), "..", "shared")
	}
	p := filepath.Join(append([]string{base}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("shared reference files: %v (set %s to the directory holding reference/)", err, SharedEnv)
	}
	return p
}

// ReleaseDir is one of the upstream MicroShift release directories ("main"
// for 5.0, "release-4.18"), laid out as the microshift-release-info RPMs
// install them.
func ReleaseDir(t testing.TB, branch string) string {
	t.Helper()
	return Shared(t, "reference", "microshift-release", branch)
}
