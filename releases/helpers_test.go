package releases_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// sharedDir is the shared upstream reference directory (../shared).
func sharedDir(t testing.TB) string { return testutil.Shared(t) }

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
