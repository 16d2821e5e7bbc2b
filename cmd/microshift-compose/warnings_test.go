package main

import (
	"bytes"
	"encoding/base64"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
)

// checkWarningStyle fails when stderr holds a line that is neither a
// "warning: " line nor empty: no "level=WARN msg=..." from slog or logrus.
func checkWarningStyle(t *testing.T, stderr string) []string {
	t.Helper()
	var warnings []string
	for _, l := range nonEmptyLines(stderr) {
		if !strings.HasPrefix(l, "warning: ") {
			t.Errorf("stderr line %q is not a warning: ... line", l)
			continue
		}
		warnings = append(warnings, l)
	}
	if strings.Contains(stderr, "level=") {
		t.Errorf("stderr has a log-style line: %q", stderr)
	}
	return warnings
}

// TestWarningStyle: every user-facing warning is a "warning: ..." line on
// stderr: the commands' own (pull secret without credentials, a killed
// build's images kept) and what slog or containers/image's logrus log at
// warning level; -v diagnostics stay logfmt.
func TestWarningStyle(t *testing.T) {
	t.Run("slog and logrus", func(t *testing.T) {
		var b bytes.Buffer
		slog.New(newLogHandler(&b, slog.LevelWarn)).With("dir", "/tmp/x").Warn("could not\nremove", "err", "busy")
		routeLogrus(&b, false)
		logrus.Warnf("Not using %s", "native diff")
		logrus.Info("not shown")
		want := "warning: could not remove dir=/tmp/x err=busy\nwarning: Not using native diff\n"
		if b.String() != want {
			t.Errorf("logged %q, want %q", b.String(), want)
		}
		b.Reset()
		slog.New(newLogHandler(&b, slog.LevelDebug)).Debug("retrying", "attempt", 2)
		if got := b.String(); got != "level=DEBUG msg=retrying attempt=2\n" {
			t.Errorf("-v diagnostic = %q", got)
		}
	})

	t.Run("pull secret without credentials", func(t *testing.T) {
		dir := t.TempDir()
		secret := filepath.Join(dir, "pull-secret.json")
		auth := base64.StdEncoding.EncodeToString([]byte("u:p"))
		if err := os.WriteFile(secret, []byte(`{"auths":{"other.example.com":{"auth":"`+auth+`"}}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runCLI(t, "build", "--profile", "minimal", "--arch", "x86_64", "--output", filepath.Join(dir, "out"), "--pull-secret", secret)
		if code != exitOK {
			t.Fatalf("build = exit %d: %s", code, stderr)
		}
		w := checkWarningStyle(t, stderr)
		if !strings.Contains(strings.Join(w, "\n"), "the pull secret has no credentials for quay.io") {
			t.Errorf("no warning about the pull secret: %q", stderr)
		}
	})

	t.Run("a killed build's images kept", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		build := []string{"build", "--profile", "minimal", "--arch", "x86_64", "--output", out}
		if _, stderr, code := runCLI(t, build...); code != exitOK {
			t.Fatalf("build = exit %d: %s", code, stderr)
		}
		for _, d := range []string{filepath.Join(out, "images"), filepath.Join(dir, ".out.tmp-killed", "images")} {
			if err := os.MkdirAll(filepath.Join(d, "blobs", "sha256"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, stderr, code := runCLI(t, build...)
		if code != exitOK {
			t.Fatalf("build = exit %d: %s", code, stderr)
		}
		w := checkWarningStyle(t, stderr)
		if len(w) == 0 || !strings.Contains(w[0], "a killed build left mirrored images in "+filepath.Join(dir, ".out.tmp-killed")) {
			t.Errorf("warnings %q, want the kept images named", w)
		}
	})
}

// TestAllowUnpinnedHelp: every command with --allow-unpinned says what it
// does with a tag-only reference; mirror copies, it does not embed.
func TestAllowUnpinnedHelp(t *testing.T) {
	root := newRootCmd(&bytes.Buffer{}, &bytes.Buffer{})
	seen := 0
	for _, c := range root.Commands() {
		f := c.Flags().Lookup("allow-unpinned")
		if f == nil {
			continue
		}
		seen++
		if f.Usage == "" {
			t.Errorf("%s --allow-unpinned has no help", c.Name())
		}
		// build and matrix (a build per cell) embed images.
		if c.Name() != "build" && c.Name() != "matrix" && strings.Contains(f.Usage, "embed") {
			t.Errorf("%s --allow-unpinned says %q: only build and matrix embed images", c.Name(), f.Usage)
		}
	}
	if seen != len(allowUnpinnedUsage) {
		t.Errorf("%d commands have --allow-unpinned, %d help texts", seen, len(allowUnpinnedUsage))
	}
}
