package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// repoRoot is the directory holding go.mod.
var repoRoot = testutil.ModuleRoot

func root(t *testing.T) string {
	t.Helper()
	dir, err := repoRoot()
	if err != nil {
		t.Fatalf("finding the repository root (go.mod above the working directory): %v", err)
	}
	return dir
}

// referenceDir is the real upstream release directory named ("main",
// "release-4.18") in ../shared/reference/microshift-release.
func referenceDir(t *testing.T, name string) string { return testutil.ReleaseDir(t, name) }

// runCLI runs the command line in-process and returns what it printed and
// its exit code.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// streamPinWarning is the warning of every plan of the embedded releases,
// which are branch-head nightlies: their RPMs are pinned to the stream.
var streamPinWarning = regexp.MustCompile(`(?m)^warning: release base \S+ is (a nightly build|a release candidate|a pre-release): no RPM of that version is published, so MicroShift's RPMs are pinned to the stream \S+ and [^\n]*\n`)

// withoutStreamPinWarning drops that warning: tests of everything else
// look past it (TestStreamPinWarning checks it).
func withoutStreamPinWarning(stderr string) string {
	return streamPinWarning.ReplaceAllString(stderr, "")
}

// mustRun runs a command that must succeed with nothing on stderr but the
// stream pin warning of a nightly release.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, code := runCLI(t, args...)
	if code != exitOK || withoutStreamPinWarning(stderr) != "" {
		t.Fatalf("run(%q) = exit %d, stderr %q; want exit 0 and no stderr", args, code, stderr)
	}
	return stdout
}

// snapshot records every file and directory under dir: relative path ->
// contents ("/" suffix and no contents for directories).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			files[filepath.ToSlash(rel)+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatalf("snapshotting %s: %v", dir, err)
	}
	return files
}

// diffSnapshots describes how two snapshots differ, "" when they are equal.
func diffSnapshots(before, after map[string]string) string {
	var diffs []string
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			diffs = append(diffs, "removed "+p)
		case a != b:
			diffs = append(diffs, "changed "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diffs = append(diffs, "added "+p)
		}
	}
	return strings.Join(diffs, ", ")
}

// leftovers lists temporary or backup directories that Write could leave
// beside (or inside) an output directory.
func leftovers(t *testing.T, dirs ...string) []string {
	t.Helper()
	var out []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("listing %s: %v", dir, err)
		}
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") || strings.HasSuffix(e.Name(), ".old") {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	return out
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// versionLess compares major.minor streams ("4.9" < "4.18").
func versionLess(a, b string) bool {
	var am, an, bm, bn int
	fmt.Sscanf(a, "%d.%d", &am, &an)
	fmt.Sscanf(b, "%d.%d", &bm, &bn)
	return am < bm || am == bm && an < bn
}
