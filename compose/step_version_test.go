package compose_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// releaseWithBase writes the embedded release of stream into a directory,
// every file's release.base replaced by base (a shipped version, say), as
// a microshift-release-info RPM of that version installs them.
func releaseWithBase(t *testing.T, stream, base string) *releases.Release {
	t.Helper()
	dir := t.TempDir()
	for _, f := range assembletest.Release(t, stream).Files() {
		c := *f
		c.Base = base
		if err := os.WriteFile(filepath.Join(dir, c.Name), c.Encode(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rel, err := releases.LoadDir(dir)
	if err != nil {
		t.Fatalf("LoadDir(%s) = %v", dir, err)
	}
	return rel
}

// blueprintPackages reads the [[packages]] of a blueprint.
func blueprintPackages(t *testing.T, data []byte) map[string]string {
	t.Helper()
	var bp struct {
		Packages []struct{ Name, Version string }
	}
	if _, err := toml.Decode(string(data), &bp); err != nil {
		t.Fatalf("blueprint does not decode: %v", err)
	}
	out := map[string]string{}
	for _, p := range bp.Packages {
		out[p.Name] = p.Version
	}
	return out
}

// containerfilePackages reads the name-version specs of its dnf install.
func containerfilePackages(data []byte) map[string]string {
	out := map[string]string{}
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "RUN dnf install -y"):
			in = true
		case in && strings.HasPrefix(l, "&&"):
			in = false
		case in:
			spec := strings.Trim(strings.TrimSuffix(l, " \\"), "'")
			if m := regexp.MustCompile(`^(microshift(?:-[a-z-]+?)?)-(\d.*)$`).FindStringSubmatch(spec); m != nil {
				out[m[1]] = m[2]
			} else {
				out[spec] = ""
			}
		}
	}
	return out
}

func TestVersionPin(t *testing.T) {
	cat := assembletest.Catalog(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, base string
		exact      bool // --exact-version
		wantPin    string
		wantVer    string // of every MicroShift RPM
		wantErr    string
	}{
		{name: "a shipped version pins every RPM to it", base: "4.18.7", wantPin: plan.PinExact, wantVer: "4.18.7"},
		{name: "a shipped version with --exact-version", base: "4.18.7", exact: true, wantPin: plan.PinExact, wantVer: "4.18.7"},
		{name: "a nightly pins to the stream", base: "4.18.0-0.nightly-2026-08-12-221652", wantPin: plan.PinStream, wantVer: "4.18.*"},
		{name: "a release candidate pins to the stream", base: "4.18.0-rc.3", wantPin: plan.PinStream, wantVer: "4.18.*"},
		{name: "a nightly with --exact-version is refused", base: "4.18.0-0.nightly-2026-08-12-221652", exact: true,
			wantErr: "is 4.18.0-0.nightly-2026-08-12-221652, a nightly build, not a published version: no MicroShift RPM has its exact version, so the RPMs cannot be pinned to the version of its images (--exact-version)"},
		{name: "a candidate with --exact-version is refused", base: "4.18.0-ec.2", exact: true, wantErr: "is 4.18.0-ec.2, a release candidate, not a published version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rel := releaseWithBase(t, "4.18", tc.base)
			p, err := compose.Resolve(ctx, cat, rel, compose.Request{Profile: "full", Arch: releases.X86_64, With: []string{"olm", "multus"}, ExactVersion: tc.exact})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Resolve() = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve() = %v", err)
			}
			if p.Release.Pin != tc.wantPin || p.Release.Kind != releases.BaseKind(tc.base) {
				t.Errorf("lock release pin %q kind %q, want %q %q", p.Release.Pin, p.Release.Kind, tc.wantPin, releases.BaseKind(tc.base))
			}
			warned := len(p.Warnings) > 0 && strings.HasPrefix(p.Warnings[0], "release base "+tc.base+" is ")
			if warned != (tc.wantPin == plan.PinStream) {
				t.Errorf("warnings %q: version warning %v, want %v", p.Warnings, warned, tc.wantPin == plan.PinStream)
			}
			out, err := assemble.Build(ctx, p, assemble.Options{Bootc: true})
			if err != nil {
				t.Fatalf("Build() = %v", err)
			}
			bp := blueprintPackages(t, out.File(output.BlueprintFile).Data)
			cf := containerfilePackages(out.File(output.Containerfile).Data)
			n := 0
			for _, pkg := range p.Packages {
				if !strings.HasPrefix(pkg.Name, "microshift") {
					if pkg.Version != "" || bp[pkg.Name] != "" {
						t.Errorf("%s (not MicroShift's) is pinned to %q", pkg.Name, pkg.Version)
					}
					continue
				}
				n++
				if pkg.Version != tc.wantVer || bp[pkg.Name] != tc.wantVer || cf[pkg.Name] != tc.wantVer {
					t.Errorf("%s: lock %q, blueprint %q, Containerfile %q; want %q everywhere", pkg.Name, pkg.Version, bp[pkg.Name], cf[pkg.Name], tc.wantVer)
				}
			}
			if n < 7 { // the five core RPMs, olm and multus (and their release-info)
				t.Errorf("only %d MicroShift packages: %v", n, p.Packages)
			}
		})
	}
}

// The version step alone: the pin, its kind and the stream pin's warning.
func TestStepVersion(t *testing.T) {
	const nightly = "5.0.0-0.nightly-2026-08-12-221652"
	for _, tc := range []struct {
		name, base        string
		exact             bool
		wantKind, wantPin string
		wantWarnings      []string
		wantErr           string
	}{
		{name: "shipped", base: "5.0.0", wantKind: releases.Shipped, wantPin: plan.PinExact},
		{name: "a nightly", base: nightly, wantKind: releases.BaseKind(nightly), wantPin: plan.PinStream, wantWarnings: []string{
			"release base " + nightly + " is a nightly build: no RPM of that version is published, so MicroShift's RPMs are pinned to the stream 5.0.* and the device may install a version whose images are not the ones embedded; build from a shipped version's release files, or pass --exact-version to refuse"}},
		{name: "a nightly with --exact-version", base: nightly, exact: true,
			wantErr: "release 5.0 (steps) is " + nightly + ", a nightly build, not a published version: no MicroShift RPM has its exact version, so the RPMs cannot be pinned to the version of its images (--exact-version); build from a shipped version's release files (--release-dir)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := runStep(t, "version", nil, stepRelease(t, tc.base, false), compose.Request{Profile: "full", ExactVersion: tc.exact}, selectedPlan("full", "core"))
			if !checkStepErr(t, err, tc.wantErr) {
				return
			}
			if p.Release.Kind != tc.wantKind || p.Release.Pin != tc.wantPin || !slices.Equal(p.Warnings, tc.wantWarnings) {
				t.Errorf("kind %q pin %q warnings %q, want %q %q %q", p.Release.Kind, p.Release.Pin, p.Warnings, tc.wantKind, tc.wantPin, tc.wantWarnings)
			}
		})
	}
}
