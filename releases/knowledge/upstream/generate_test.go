package upstream_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/knowledge/upstream"
)

// root is the source tree holding the checked-in data.
const root = "../../.."

// The checked-in release bundles and knowledge are exactly what the
// generator makes from the pinned commits of a MicroShift git directory
// (MICROSHIFT_GIT_DIR, e.g. make test MICROSHIFT=<git dir>): nobody edited
// them by hand, and the hand-kept facts still fit every pinned stream.
func TestCheckedInDataMatchesPinnedCommits(t *testing.T) {
	dir := os.Getenv("MICROSHIFT_GIT_DIR")
	if dir == "" {
		t.Skip("MICROSHIFT_GIT_DIR is not set: no MicroShift git directory to regenerate releases/data and releases/knowledge/data from (make test MICROSHIFT=<git dir>)")
	}
	ctx := context.Background()
	g, err := upstream.OpenGit(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	pins, hand, err := upstream.LoadInputs(root)
	if err != nil {
		t.Fatal(err)
	}
	out, err := upstream.Generate(ctx, g, pins, hand)
	if err != nil {
		t.Fatalf("Generate() = %v", err)
	}
	var names []string
	for p := range out.Files {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		have, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Errorf("%s: %v (run make knowledge-pinned)", p, err)
			continue
		}
		if !bytes.Equal(have, out.Files[p]) {
			t.Errorf("%s differs from what the pinned commits generate (run make knowledge-pinned MICROSHIFT=...): %s", p, testutil.FirstDiff(have, out.Files[p]))
		}
	}
	stale, err := upstream.StaleBundles(root, pins)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Errorf("bundles of unpinned streams: %q", stale)
	}
	t.Logf("%d files match the pinned commits", len(names))
}
