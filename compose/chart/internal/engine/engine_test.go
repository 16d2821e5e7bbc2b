package engine_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	helmengine "helm.sh/helm/v3/pkg/engine"

	"github.com/microshift-compose/microshift-compose/compose/chart/internal/engine"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite testdata/engine.go.diff")

// helmEngineDir is pkg/engine of the Helm module the build uses.
func helmEngineDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "helm.sh/helm/v3").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go list -m helm.sh/helm/v3: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "pkg", "engine")
}

// TestEngineMatchesHelm: funcs.go and files.go are Helm's, byte for byte,
// and engine.go differs from Helm's by testdata/engine.go.diff, the
// changes the package doc lists (go test -update rewrites it after a Helm
// update; review it).
func TestEngineMatchesHelm(t *testing.T) {
	dir := helmEngineDir(t)
	for _, f := range []string{"funcs.go", "files.go"} {
		theirs, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		ours, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, theirs) {
			t.Errorf("%s differs from Helm's %s", f, filepath.Join(dir, f))
		}
	}
	cmd := exec.Command("diff", "-u", "--label", "helm/pkg/engine/engine.go", "--label", "compose/chart/internal/engine/engine.go", filepath.Join(dir, "engine.go"), "engine.go")
	got, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		t.Fatalf("diff: %v", err)
	}
	if *update {
		if err := os.WriteFile(filepath.Join("testdata", "engine.go.diff"), got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(filepath.Join("testdata", "engine.go.diff"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("engine.go differs from Helm's by other changes than testdata/engine.go.diff (go test -update, then review):\n%s", testutil.FirstDiff(want, got))
	}
}

// TestRendersAsHelm: without a guard the copy renders the real podinfo
// chart exactly as Helm's engine does (but for the random names of its
// test hooks).
func TestRendersAsHelm(t *testing.T) {
	ch, err := loader.LoadDir(filepath.Join(testutil.Root(t), "testdata", "charts", "podinfo"))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ReadValues([]byte("redis:\n  enabled: true\ningress:\n  enabled: true\nserviceMonitor:\n  enabled: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "web", Namespace: "edge", Revision: 1, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := helmengine.Render(ch, top)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := engine.Render(ch, top)
	if err != nil {
		t.Fatal(err)
	}
	// podinfo's test hooks name themselves with randAlphaNum.
	for name := range theirs {
		if strings.Contains(name, "/tests/") {
			delete(theirs, name)
			delete(ours, name)
		}
	}
	if len(ours) < 10 || !reflect.DeepEqual(ours, theirs) {
		t.Errorf("the copy renders %d files differently from Helm's engine (%d)", len(ours), len(theirs))
		for name, data := range theirs {
			if ours[name] != data {
				t.Errorf("%s:\n%s", name, testutil.FirstDiff([]byte(data), []byte(ours[name])))
			}
		}
	}
}
