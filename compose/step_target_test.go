package compose_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
	"github.com/microshift-compose/microshift-compose/releases"
)

func TestTarget(t *testing.T) {
	cat := assembletest.Catalog(t)
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
			rel := assembletest.Release(t, tc.stream)
			p, err := compose.Resolve(ctx, cat, rel, compose.Request{Profile: "full", Arch: releases.X86_64, Distro: tc.distro, BootcBase: tc.bootcBase})
			var out *output.Dir
			if err == nil {
				out, err = assemble.Build(ctx, p, assemble.Options{Bootc: tc.bootc, ImageType: tc.imageType})
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
			cf := out.File(output.Containerfile)
			if cf == nil || !strings.Contains(string(cf.Data), "\nARG BASE_IMAGE="+tc.wantBase+"\nFROM ${BASE_IMAGE}\n") {
				t.Errorf("Containerfile does not start from %s", tc.wantBase)
			}
			if got := out.File(output.BlueprintFile) != nil; got != tc.wantBlueprint {
				t.Errorf("blueprint written: %v, want %v", got, tc.wantBlueprint)
			}
			lock, err := lockfile.Parse("lock", out.File(output.LockFile).Data)
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

// The target step alone: the release's default distro and its bootc base,
// or the ones asked for.
func TestStepTarget(t *testing.T) {
	rel := stepRelease(t, "5.0.0", false)
	for _, tc := range []struct {
		name, distro, bootcBase string
		want                    plan.Target
		wantErr                 string
	}{
		{name: "the default", want: plan.Target{Distro: "rhel-9.8", ImageType: "edge-commit", BootcBase: "registry.redhat.io/rhel9/rhel-bootc:9.8"}},
		{name: "another distro of the release", distro: "rhel-10.2", want: plan.Target{Distro: "rhel-10.2", ImageType: "", BootcBase: "registry.redhat.io/rhel10/rhel-bootc:10.2"}},
		{name: "--bootc-base", bootcBase: "quay.io/x/base:1", want: plan.Target{Distro: "rhel-9.8", ImageType: "edge-commit", BootcBase: "quay.io/x/base:1"}},
		{name: "a distro the release is not built for", distro: "rhel-9.6",
			wantErr: `release 5.0 (steps) is not built for distro "rhel-9.6": MicroShift 5.0 is built and tested for rhel-9.8, rhel-10.2`},
		{name: "a typo", distro: "rhel9.8",
			wantErr: `release 5.0 (steps) is not built for distro "rhel9.8": MicroShift 5.0 is built and tested for rhel-9.8, rhel-10.2; did you mean "rhel-9.8"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := runStep(t, "target", nil, rel, compose.Request{Profile: "full", Distro: tc.distro, BootcBase: tc.bootcBase}, selectedPlan("full", "core"))
			if !checkStepErr(t, err, tc.wantErr) {
				var cannot *compose.CannotHonourError
				if !errors.As(err, &cannot) {
					t.Errorf("err is a %T, not a CannotHonourError", err)
				}
				return
			}
			if p.Target != tc.want {
				t.Errorf("target = %+v, want %+v", p.Target, tc.want)
			}
		})
	}
}
