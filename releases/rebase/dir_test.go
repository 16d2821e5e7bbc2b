package rebase_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/releases/rebase"
)

func TestLoadFiles(t *testing.T) {
	for _, tc := range []struct {
		dir, label string
		files      int
	}{
		{copyRelease(t, "release-4.18"), "release 4.18 (DIR)", 8},
		// A catalog component's own release/ directory: no core file.
		{filepath.Join("..", "..", "components", "data", "components", "storage-hostpath", "release"), "component release files in DIR", 2},
	} {
		files, label, err := rebase.LoadFiles(tc.dir)
		if err != nil || len(files) != tc.files || label != strings.ReplaceAll(tc.label, "DIR", tc.dir) {
			t.Errorf("LoadFiles(%s) = %d files, %q, %v; want %d files, %q", tc.dir, len(files), label, err, tc.files, tc.label)
		}
	}
	empty := t.TempDir()
	if _, _, err := rebase.LoadFiles(empty); errString(err) != "release dir "+empty+" has no release files (release-<arch>.json or release-<component>-<arch>.json)" {
		t.Errorf("LoadFiles(empty) = %v", err)
	}
}
