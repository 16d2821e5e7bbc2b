package compose_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// releaseWithBase writes the embedded release of stream into a directory,
// every file's release.base replaced by base (a shipped version, say), as
// a microshift-release-info RPM of that version installs them.
func releaseWithBase(t *testing.T, stream, base string) *releases.Release {
	t.Helper()
	dir := t.TempDir()
	for _, f := range embeddedRelease(t, stream).Files() {
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
	cat := defaultCatalog(t)
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
			out, err := compose.Build(ctx, p, compose.BuildOptions{Bootc: true})
			if err != nil {
				t.Fatalf("Build() = %v", err)
			}
			bp := blueprintPackages(t, out.File(compose.BlueprintFile).Data)
			cf := containerfilePackages(out.File(compose.Containerfile).Data)
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

func TestTarget(t *testing.T) {
	cat := defaultCatalog(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, stream, distro, bootcBase string
		bootc                           bool
		imageType                       string
		wantDistro, wantBase            string
		wantBlueprint                   bool
		wantErr                         string
	}{
		{name: "4.16 on RHEL 9.4", stream: "4.16", bootc: true, wantDistro: "rhel-9.4", wantBase: "registry.redhat.io/rhel9/rhel-bootc:9.4", wantBlueprint: true},
		{name: "4.18 on the 9.4 EUS base", stream: "4.18", bootc: true, wantDistro: "rhel-9.4", wantBase: "registry.redhat.io/rhel9-eus/rhel-9.4-bootc:9.4", wantBlueprint: true},
		{name: "4.20 on RHEL 9.6", stream: "4.20", bootc: true, wantDistro: "rhel-9.6", wantBase: "registry.redhat.io/rhel9-eus/rhel-9.6-bootc:9.6", wantBlueprint: true},
		{name: "5.0 on RHEL 9.8", stream: "5.0", bootc: true, wantDistro: "rhel-9.8", wantBase: "registry.redhat.io/rhel9/rhel-bootc:9.8", wantBlueprint: true},
		{name: "5.0 on RHEL 10.2 with bootc: no blueprint, a note", stream: "5.0", distro: "rhel-10.2", bootc: true, wantDistro: "rhel-10.2", wantBase: "registry.redhat.io/rhel10/rhel-bootc:10.2"},
		{name: "4.21 on RHEL 10.0 with bootc", stream: "4.21", distro: "rhel-10.0", bootc: true, wantDistro: "rhel-10.0", wantBase: "registry.redhat.io/rhel10/rhel-bootc:10.0"},
		{name: "RHEL 10 with a package-based image type writes the blueprint", stream: "5.0", distro: "rhel-10.2", bootc: true, imageType: "image-installer", wantDistro: "rhel-10.2", wantBase: "registry.redhat.io/rhel10/rhel-bootc:10.2", wantBlueprint: true},
		{name: "--bootc-base overrides the distro's", stream: "5.0", bootcBase: "quay.io/centos-bootc/centos-bootc:stream9", bootc: true, wantDistro: "rhel-9.8", wantBase: "quay.io/centos-bootc/centos-bootc:stream9", wantBlueprint: true},
		{name: "4.14 has no bootc base", stream: "4.14", bootc: true, wantErr: "release 4.14 (embedded) targets rhel-9.2, which has no bootc base image for MicroShift 4.14: pass --bootc-base IMAGE"},
		{name: "4.14 with --bootc-base", stream: "4.14", bootc: true, bootcBase: "registry.example.com/edge/rhel-bootc:9.2", wantDistro: "rhel-9.2", wantBase: "registry.example.com/edge/rhel-bootc:9.2", wantBlueprint: true},
		{name: "RHEL 10 without bootc is refused", stream: "5.0", distro: "rhel-10.2",
			wantErr: "rhel-10.2 is image mode (bootc) only for MicroShift: it has no rpm-ostree image types; use --bootc for the Containerfile, or --image-type for a package-based image (rhel-10.2 has "},
		{name: "an rpm-ostree image type on RHEL 10 is refused", stream: "5.0", distro: "rhel-10.2", bootc: true, imageType: "edge-commit",
			wantErr: "rhel-10.2 is image mode (bootc) only for MicroShift: it has no rpm-ostree image types such as edge-commit; use --bootc for the Containerfile, or --image-type for a package-based image (rhel-10.2 has "},
		{name: "a release not built for RHEL 10", stream: "4.20", distro: "rhel-10.0",
			wantErr: `release 4.20 (embedded) is not built for distro "rhel-10.0": MicroShift 4.20 is built and tested for rhel-9.6`},
		{name: "a release not built for another RHEL 9 minor", stream: "4.18", distro: "rhel-9.6",
			wantErr: `release 4.18 (embedded) is not built for distro "rhel-9.6": MicroShift 4.18 is built and tested for rhel-9.4`},
		{name: "a distro osbuild does not know is a typo", stream: "4.18", distro: "rhel9.4",
			wantErr: `release 4.18 (embedded) is not built for distro "rhel9.4": MicroShift 4.18 is built and tested for rhel-9.4; did you mean "rhel-9.4"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rel := embeddedRelease(t, tc.stream)
			p, err := compose.Resolve(ctx, cat, rel, compose.Request{Profile: "full", Arch: releases.X86_64, Distro: tc.distro, BootcBase: tc.bootcBase})
			var out *compose.Output
			if err == nil {
				out, err = compose.Build(ctx, p, compose.BuildOptions{Bootc: tc.bootc, ImageType: tc.imageType})
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err = %v, want one line with %q", err, tc.wantErr)
				}
				if strings.Contains(tc.wantErr, "not built for distro") {
					var cannot *compose.CannotHonourError
					if !errors.As(err, &cannot) {
						t.Errorf("err is not a CannotHonourError: %T", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if p.Target.Distro != tc.wantDistro || p.Target.BootcBase != tc.wantBase {
				t.Errorf("target %+v, want %s on %s", p.Target, tc.wantDistro, tc.wantBase)
			}
			cf := out.File(compose.Containerfile)
			if cf == nil || !strings.Contains(string(cf.Data), "\nARG BASE_IMAGE="+tc.wantBase+"\nFROM ${BASE_IMAGE}\n") {
				t.Errorf("Containerfile does not start from %s", tc.wantBase)
			}
			if got := out.File(compose.BlueprintFile) != nil; got != tc.wantBlueprint {
				t.Errorf("blueprint written: %v, want %v", got, tc.wantBlueprint)
			}
			lock, err := compose.ParseLock("lock", out.File(compose.LockFile).Data)
			if err != nil {
				t.Fatal(err)
			}
			noted := false
			for _, n := range lock.Notes {
				noted = noted || strings.HasPrefix(n, "blueprint.toml not written: "+tc.wantDistro+" has no rpm-ostree image types")
			}
			if noted == tc.wantBlueprint {
				t.Errorf("lock notes %q: note on the missing blueprint %v, want %v", lock.Notes, noted, !tc.wantBlueprint)
			}
			if len(p.Notes) != len(lock.Notes) && tc.wantBlueprint {
				t.Errorf("Build changed the plan's notes")
			}
		})
	}
}

func TestUpgradeFrom(t *testing.T) {
	cat := defaultCatalog(t)
	ctx := context.Background()
	for _, tc := range []struct {
		from, to string
		want     string
	}{
		{"4.14", "4.15", ""},
		{"4.14", "4.16", ""},
		{"4.16", "4.19", "upgrading from 4.16: MicroShift 4.19 does not start on data written by 4.16: 4.19 is 3 minor versions newer, and it takes over data at most 2 older; upgrade through 4.18 first"},
		{"4.21", "5.0", ""},
		{"4.20", "5.0", "upgrading from 4.20: MicroShift 5.0 does not start on data written by 4.20: 5.0 is 3 minor versions newer, and it takes over data at most 2 older; upgrade through 4.22 first"},
		{"5.0", "4.22", "upgrading from 5.0: MicroShift 4.22 does not start on data written by 5.0: it never migrates data to an older release"},
	} {
		t.Run(tc.from+"->"+tc.to, func(t *testing.T) {
			p, err := compose.Resolve(ctx, cat, embeddedRelease(t, tc.to), compose.Request{Profile: "full", Arch: releases.X86_64, UpgradeFrom: semver.MustParse(tc.from)})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Resolve() = %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("Resolve() = %v, want %q", err, tc.want)
			case tc.want == "" && (p.Release.UpgradeFrom == nil || p.Release.UpgradeFrom.From != tc.from):
				t.Errorf("lock upgrade_from = %+v, want from %s", p.Release.UpgradeFrom, tc.from)
			}
		})
	}
}
