package releases_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// sharedDir returns ../shared next to the repository root (the directory
// holding go.mod), where the real upstream reference files live.
func sharedDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's working directory")
		}
		dir = parent
	}
}

// refDir is one of the upstream release directories: "main" (5.0) or
// "release-4.18".
func refDir(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(sharedDir(t), "reference", "microshift-release", name)
}

// refFiles returns the release-*.json files of an upstream directory, by
// base name, sorted.
func refFiles(t testing.TB, name string) (names []string, data map[string][]byte) {
	t.Helper()
	dir := refDir(t, name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading reference dir: %v", err)
	}
	data = map[string][]byte{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "release-") || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, e.Name())
		data[e.Name()] = b
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatalf("no release files in %s", dir)
	}
	return names, data
}
