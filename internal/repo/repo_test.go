package repo_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// maxTrackedSize is the largest file the repository may track outside
// testdata/: a committed binary or archive is downloaded by every clone.
const maxTrackedSize = 1 << 20

// TestNoLargeTrackedFiles fails on any file git tracks, outside a
// testdata/ directory, larger than 1 MB.
func TestNoLargeTrackedFiles(t *testing.T) {
	root := testutil.Root(t)
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("not checking tracked file sizes: git is not installed")
	}
	cmd := exec.Command(git, "-C", root, "ls-files", "-z")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("not checking tracked file sizes: %s is not a git checkout", root)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 10 {
		t.Fatalf("git ls-files listed only %d files", len(files))
	}
	for _, f := range files {
		if f == "" || underTestdata(f) {
			continue
		}
		st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		if st.Mode().IsRegular() && st.Size() > maxTrackedSize {
			t.Errorf("%s is tracked and %d bytes (more than 1 MB): build outputs belong in .gitignore, fixtures under testdata/", f, st.Size())
		}
	}
}

func underTestdata(path string) bool {
	return strings.HasPrefix(path, "testdata/") || strings.Contains(path, "/testdata/")
}

func TestUnderTestdata(t *testing.T) {
	for path, want := range map[string]bool{
		"testdata/golden/x":       true,
		"compose/testdata/fuzz/x": true,
		"microshift-compose":      false,
		"docs/testdata.md":        false,
		"mytestdata/x":            false,
	} {
		if got := underTestdata(path); got != want {
			t.Errorf("underTestdata(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestLicense: the repository carries the Apache License 2.0 text whole.
func TestLicense(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testutil.Root(t), "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"Apache License\n                           Version 2.0, January 2004", "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION", "END OF TERMS AND CONDITIONS", "APPENDIX: How to apply the Apache License to your work."} {
		if !bytes.Contains(data, []byte(part)) {
			t.Errorf("LICENSE lacks %q", part)
		}
	}
}
