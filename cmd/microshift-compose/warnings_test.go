package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/plan"
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

// TestBuildWarnings: every warning a build records, wherever it is added
// (resolving, the device options, the installer after resolution, writing
// the output), is printed exactly once as a "warning:" line on stderr, and
// the lines on stderr are exactly the warnings of build --format json,
// which holds every warning of the lock. The text form prints the same
// stderr.
func TestBuildWarnings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	auth := base64.StdEncoding.EncodeToString([]byte("u:p"))
	secret := write("pull-secret.json", `{"auths":{"other.example.com":{"auth":"`+auth+`"}}}`)
	lvmd := write("lvmd.yaml", "device-classes:\n- name: ssd\n  volume-group: vg_ssd\n  default: true\n- name: hdd\n  volume-group: vg_hdd\n")
	key := write("cosign.pub", publicKeyPEM(t))
	newer := filepath.Join(root(t), "testdata", "bad", "releases", "newer-5.2")
	manifests := filepath.Join(root(t), "testdata", "catalogs", "manifests")
	killed := func(t *testing.T, out string) {
		t.Helper()
		if _, stderr, code := runCLI(t, "build", "--profile", "networking-only", "--arch", "x86_64", "--output", out); code != exitOK {
			t.Fatalf("build = exit %d: %s", code, stderr)
		}
		for _, d := range []string{filepath.Join(out, "images"), filepath.Join(filepath.Dir(out), ".out.tmp-killed", "images")} {
			if err := os.MkdirAll(filepath.Join(d, "blobs", "sha256"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name  string
		args  []string
		setup func(t *testing.T, out string)
		want  string // a warning holding this
		// inLock: the warning is about the composition, so the lock
		// records it; a killed build's leftovers are about the output
		// directory, and only the summary does.
		inLock bool
	}{
		{name: "nightly release", args: []string{"--profile", "networking-only", "--release", "4.19"},
			want: "release base 4.19.0-0.nightly-", inLock: true},
		{name: "release newer than the tool", args: []string{"--profile", "networking-only", "--release-dir", newer},
			want: "release 5.2 is newer than the releases microshift-compose knows (the newest is 5.1): built assuming 5.1's rules", inLock: true},
		{name: "no CNI", args: []string{"--profile", "minimal", "--release", "4.19"},
			want: "no CNI: MicroShift deploys no pod network (network.cniPlugin: none), so DNS, the router and service-ca never become ready and greenboot marks the boot red unless the image brings a CNI of its own", inLock: true},
		{name: "red boot accepted", args: []string{"--profile", "storage-only", "--release", "4.18", "--allow-red-boot"},
			want: "greenboot marks every boot red, even with a CNI of your own (built anyway: --allow-red-boot)", inLock: true},
		{name: "tag-only image accepted", args: []string{"--profile", "networking-only", "--with", "ai-model-serving", "--release", "5.0", "--allow-unpinned"},
			want: `component "ai-model-serving" image "ovms-image" (release-ai-model-serving-x86_64.json) is not pinned by digest`, inLock: true},
		{name: "image no manifest uses", args: []string{"--catalog", manifests, "--profile", "networking-only", "--with", "edge-app", "--release", "4.18"},
			want: `component "edge-app": image "unused" (quay.io/example/unused@sha256:`, inLock: true},
		{name: "pull secret without the registry's credentials", args: []string{"--profile", "networking-only", "--pull-secret", secret},
			want: "the pull secret has no credentials for quay.io", inLock: true},
		{name: "policy rejecting the bootc image's updates", args: []string{"--profile", "networking-only", "--bootc", "--verify-key", key},
			want: "policy.json from --verify-key rejects every image outside the plan's repositories", inLock: true},
		// Added by the installer after resolution: the case the printer
		// used to miss.
		{name: "kickstart volume groups", args: []string{"--profile", "full", "--lvmd", lvmd, "--kickstart", "--ostree-url", "http://edge.example.com/repo"},
			want: "microshift.ks creates volume group vg_ssd only; the volume groups vg_hdd of other --lvmd device classes need disks of their own", inLock: true},
		{name: "killed build's images kept", args: []string{"--profile", "networking-only"}, setup: killed,
			want: "a killed build left mirrored images in "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			run := func(format string) (stderr string, summary assemble.Summary, lock plan.Plan) {
				t.Helper()
				out := filepath.Join(base, format, "out")
				if tc.setup != nil {
					tc.setup(t, out)
				}
				args := append([]string{"build", "--arch", "x86_64", "--output", out, "--format", format}, tc.args...)
				stdout, stderr, code := runCLI(t, args...)
				if code != exitOK {
					t.Fatalf("build %q = exit %d: %s", tc.args, code, stderr)
				}
				if format == "json" {
					decodeStrict(t, "build --format json", stdout, &summary)
				}
				data, err := os.ReadFile(filepath.Join(out, "compose.lock.json"))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(data, &lock); err != nil {
					t.Fatal(err)
				}
				return stderr, summary, lock
			}
			stderr, summary, lock := run("json")
			var printed []string
			for _, l := range checkWarningStyle(t, stderr) {
				printed = append(printed, strings.TrimPrefix(l, "warning: "))
			}
			for i, w := range printed {
				if slices.Contains(printed[:i], w) {
					t.Errorf("warning printed twice: %q", w)
				}
			}
			// What writing says is printed when it happens, the rest
			// once the output is in place: the same set.
			if !slices.Equal(slices.Sorted(slices.Values(printed)), slices.Sorted(slices.Values(summary.Warnings))) {
				t.Errorf("stderr warnings:\n  %q\nbuild --format json warnings:\n  %q", printed, summary.Warnings)
			}
			for _, w := range lock.Warnings {
				if !slices.Contains(summary.Warnings, w) {
					t.Errorf("the lock's warning %q is not in the summary", w)
				}
			}
			holds := func(ws []string) int {
				n := 0
				for _, w := range ws {
					if strings.Contains(w, tc.want) {
						n++
					}
				}
				return n
			}
			if n := holds(printed); n != 1 {
				t.Errorf("%d warnings on stderr hold %q, want 1:\n%s", n, tc.want, stderr)
			}
			if n := holds(lock.Warnings); (n == 1) != tc.inLock {
				t.Errorf("%d lock warnings hold %q, want it there: %v", n, tc.want, tc.inLock)
			}
			if text, _, _ := run("text"); strings.ReplaceAll(text, filepath.Join(base, "text"), filepath.Join(base, "json")) != stderr {
				t.Errorf("build prints other warnings with --format text:\n%s\nthan with --format json:\n%s", text, stderr)
			}
		})
	}
}

// publicKeyPEM is a fresh ECDSA P-256 public key in PEM, as cosign
// generate-key-pair writes cosign.pub.
func publicKeyPEM(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}
