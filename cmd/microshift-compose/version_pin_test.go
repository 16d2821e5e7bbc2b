package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/releases"
)

// shippedReleaseDir writes the embedded release of stream with every
// file's release.base set to base, as the microshift-release-info RPM of
// that shipped version installs them.
func shippedReleaseDir(t *testing.T, stream, base string) string {
	t.Helper()
	all, err := releases.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, r := range all {
		if r.Stream() != stream {
			continue
		}
		for _, f := range r.Files() {
			c := *f
			c.Base = base
			if err := os.WriteFile(filepath.Join(dir, c.Name), c.Encode(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	t.Fatalf("no embedded release %s", stream)
	return ""
}

// TestStreamPinWarning checks the one warning line of a nightly release,
// that the lock records the stream pin, that --exact-version refuses it,
// and that a shipped version is pinned exactly with no warning.
func TestStreamPinWarning(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, code := runCLI(t, "build", "--release", "4.18", "--profile", "networking-only", "--output", out)
	if code != exitOK {
		t.Fatalf("build 4.18 = exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 1 || !streamPinWarning.MatchString(stderr) || !strings.Contains(stderr, "4.18.*") {
		t.Errorf("build of a nightly release: stderr %q, want exactly one stream pin warning naming 4.18.*", stderr)
	}
	var lock struct {
		Release struct{ Base, Kind, Pin string }
	}
	data, err := os.ReadFile(filepath.Join(out, "compose.lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &lock); err != nil {
		t.Fatal(err)
	}
	if lock.Release.Pin != "stream" || lock.Release.Kind != "nightly" || !strings.Contains(lock.Release.Base, "nightly") {
		t.Errorf("lock release = %+v, want pin stream, kind nightly", lock.Release)
	}

	refused := filepath.Join(t.TempDir(), "refused")
	_, stderr, code = runCLI(t, "build", "--release", "4.18", "--profile", "networking-only", "--exact-version", "--output", refused)
	if code == exitOK || !strings.Contains(stderr, "a nightly build, not a published version") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("build --exact-version of a nightly = exit %d, stderr %q; want one error line", code, stderr)
	}
	if _, err := os.Stat(refused); !os.IsNotExist(err) {
		t.Errorf("refused build left %s behind (%v)", refused, err)
	}

	shipped := shippedReleaseDir(t, "4.18", "4.18.7")
	exact := filepath.Join(t.TempDir(), "exact")
	_, stderr, code = runCLI(t, "build", "--release-dir", shipped, "--profile", "networking-only", "--exact-version", "--bootc", "--output", exact)
	if code != exitOK || stderr != "" {
		t.Fatalf("build of shipped 4.18.7 = exit %d, stderr %q; want 0 and no warning", code, stderr)
	}
	bp, err := os.ReadFile(filepath.Join(exact, "blueprint.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(bp), `name = "microshift"`) || !strings.Contains(string(bp), `version = "4.18.7"`) || strings.Contains(string(bp), "4.18.*") {
		t.Errorf("blueprint of shipped 4.18.7 does not pin microshift to 4.18.7:\n%s", bp)
	}
	cf, err := os.ReadFile(filepath.Join(exact, "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cf), "microshift-4.18.7") || !strings.Contains(string(cf), "rhel-9.4-bootc:9.4") {
		t.Errorf("Containerfile of shipped 4.18.7 lacks microshift-4.18.7 or the RHEL 9.4 EUS bootc base:\n%s", cf)
	}
}
