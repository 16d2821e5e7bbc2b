package rebase_test

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testdata is the module's top-level testdata directory, relative to this
// package so that paths in messages are stable.
func testdata(elem ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata"}, elem...)...)
}

// copyRelease copies an upstream release directory ("main",
// "release-4.18") into a writable temporary directory.
func copyRelease(t testing.TB, branch string) string {
	t.Helper()
	return copyDir(t, testutil.ReleaseDir(t, branch))
}

func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// snapshot maps every file name in dir to its contents.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameSnapshot describes how two snapshots differ, "" when equal.
func sameSnapshot(a, b map[string]string) string {
	var diffs []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			diffs = append(diffs, "removed "+k)
		} else if v != w {
			diffs = append(diffs, "changed "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, "added "+k)
		}
	}
	return strings.Join(diffs, ", ")
}

// golden compares got with testdata/rebase/golden/<name>, or rewrites it
// with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, testdata("rebase", "golden", name), got, *update, "go test ./releases/rebase -update")
}

func loadRelease(t testing.TB, dir string) *releases.Release {
	t.Helper()
	r, err := releases.LoadDir(dir)
	if err != nil {
		t.Fatalf("LoadDir(%s) = %v", dir, err)
	}
	return r
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
