package testutil

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Golden compares got with the golden file at path or, with update, writes
// it. rerun is the command that regenerates it, for the failure message.
func Golden(t testing.TB, path string, got []byte, update bool, rerun string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (regenerate with %s): %v", rerun, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (%s, then review the diff):\n%s", path, rerun, FirstDiff(want, got))
	}
}

// FirstDiff shows the first differing line of two texts.
func FirstDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  want: %s\n   got: %s", i+1, wl, gl)
		}
	}
	return "(same lines, different bytes)"
}
