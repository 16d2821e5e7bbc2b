package assemble_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/osbuild/blueprint/pkg/blueprint"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// hardeningGoldenFiles are the outputs hardening changes; the goldens
// keep these only (the lock and SBOM are TestGolden's), plus notes.txt:
// the plan's notes and warnings, where the CIS report marks the rules a
// scan of the device fails unavoidably.
func hardeningGoldenFiles(out *output.Dir) map[string][]byte {
	files := map[string][]byte{}
	for _, f := range out.Files {
		switch {
		case slices.Contains([]string{output.BlueprintFile, output.InstallerBlueprintFile, output.Containerfile, output.KickstartFile, output.BIBConfigFile}, f.Path),
			strings.HasPrefix(f.Path, output.ConfigDir+"/"),
			strings.Contains(f.Path, "cis-audit-rules"):
			files[f.Path] = f.Data
		}
	}
	var notes bytes.Buffer
	for _, n := range out.Plan.Notes {
		notes.WriteString("note: " + n + "\n")
	}
	for _, w := range out.Plan.Warnings {
		notes.WriteString("warning: " + w + "\n")
	}
	files["notes.txt"] = notes.Bytes()
	return files
}

var hardeningKargs = []string{"console=ttyS0,115200n8", "audit=1", "audit_backlog_limit=8192"}

type hardeningCase struct {
	name    string
	stream  string
	profile string
	arch    releases.Arch
	distro  string
	hard    compose.HardeningOptions
	opts    assemble.Options
}

func hardeningCases() []hardeningCase {
	ostree := &blueprints.OSTreeOptions{URL: "http://edge.example.com/repo"}
	all := compose.HardeningOptions{FIPS: true, KernelArgs: hardeningKargs, CIS: compose.CISLevel2}
	fipsKargs := compose.HardeningOptions{FIPS: true, KernelArgs: hardeningKargs}
	return []hardeningCase{
		// RHEL 9's default: the commit (FIPS crypto policy), the kickstart
		// (fips=1 and the arguments, fips-mode-setup in %post).
		{name: "5.0-edge-commit-kickstart-fips-kargs", stream: "5.0", hard: fipsKargs,
			opts: assemble.Options{Installer: assemble.InstallerOptions{Kickstart: true, OSTree: ostree}}},
		// An installer image type carries them: installer.toml.
		{name: "5.0-edge-simplified-installer-fips-kargs", stream: "5.0", hard: fipsKargs,
			opts: assemble.Options{ImageType: "edge-simplified-installer", Installer: assemble.InstallerOptions{OSTree: ostree, InstallationDevice: "/dev/vda"}}},
		// bootc: kargs.d files, the crypto policy; bootc-image-builder's
		// anaconda-iso with the kickstart body.
		{name: "5.0-bootc-bib-kickstart-fips-kargs", stream: "5.0", hard: fipsKargs,
			opts: assemble.Options{Bootc: true, Installer: assemble.InstallerOptions{Kickstart: true, BIB: true, BootcImage: "mirror.example.com:5000/microshift/full:5.0"}}},
		// RHEL 10, image mode only: no fips-mode-setup.
		{name: "5.0-rhel10-bootc-kickstart-fips-kargs", stream: "5.0", distro: "rhel-10.2", hard: fipsKargs,
			opts: assemble.Options{Bootc: true, Installer: assemble.InstallerOptions{Kickstart: true, BootcImage: "mirror.example.com:5000/microshift/full:5.0"}}},
		// 4.19-4.21 need a router TLS profile without CHACHA20 under FIPS.
		{name: "4.19-bootc-fips", stream: "4.19", hard: compose.HardeningOptions{FIPS: true}, opts: assemble.Options{Bootc: true}},
		// CIS: a package-based image osbuild remediates, per RHEL major.
		{name: "5.0-qcow2-fips-kargs-cis", stream: "5.0", hard: all, opts: assemble.Options{ImageType: "qcow2"}},
		{name: "5.0-rhel10-qcow2-cis", stream: "5.0", distro: "rhel-10.2", hard: compose.HardeningOptions{CIS: "cis_server_l1"}, opts: assemble.Options{ImageType: "qcow2"}},
	}
}

// TestHardeningGolden: FIPS, kernel arguments and CIS in every output that
// takes them, compared with testdata/golden/hardening/<case>/ (regenerate
// with go test ./assemble -run HardeningGolden -update, and review the
// diff). Every blueprint is validated by osbuild/images for its image
// type (Build does; checked again here on the bytes written), every
// kickstart by ksvalidator, bootc-image-builder's config by its loader;
// two builds give the same bytes.
func TestHardeningGolden(t *testing.T) {
	cat := assembletest.Catalog(t)
	for _, tc := range hardeningCases() {
		t.Run(tc.name, func(t *testing.T) {
			profile, arch := tc.profile, tc.arch
			if profile == "" {
				profile = "full"
			}
			if arch == "" {
				arch = releases.X86_64
			}
			req := compose.Request{Profile: profile, Arch: arch, Distro: tc.distro, Hardening: tc.hard}
			rel := assembletest.Release(t, tc.stream)
			build := func() *output.Dir {
				p, err := assemble.Plan(context.Background(), cat, rel, req)
				if err != nil {
					t.Fatalf("Resolve = %v", err)
				}
				out, err := assemble.Build(context.Background(), p, tc.opts)
				if err != nil {
					t.Fatalf("Build = %v", err)
				}
				return out
			}
			out := build()
			files := hardeningGoldenFiles(out)
			for path, data := range hardeningGoldenFiles(build()) {
				if !bytes.Equal(files[path], data) {
					t.Errorf("two builds of the same inputs differ in %s", path)
				}
			}
			checkGoldenDir(t, testutil.TestdataDir(t, "golden", "hardening", tc.name), files)

			distro := out.Plan.Target.Distro
			if data := files[output.BlueprintFile]; data != nil {
				imageType := tc.opts.ImageType
				if imageType == "" || tc.opts.Installer.OSTree != nil && imageType != "edge-raw-image" {
					imageType = distros.DefaultImageType
				}
				validateBlueprint(t, data, distro, imageType, arch, nil)
			}
			if data := files[output.InstallerBlueprintFile]; data != nil {
				validateBlueprint(t, data, distro, tc.opts.ImageType, arch, tc.opts.Installer.OSTree)
			}
			if data := files[output.KickstartFile]; data != nil {
				ksvalidate(t, data, distro)
			}
			if data := files[output.BIBConfigFile]; data != nil {
				bp, err := blueprints.DecodeBIBConfig(data)
				if err != nil {
					t.Fatalf("bootc-image-builder cannot read %s: %v", output.BIBConfigFile, err)
				}
				if bp.Customizations.Installer == nil || bp.Customizations.Installer.Kickstart == nil {
					t.Fatalf("%s has no kickstart", output.BIBConfigFile)
				}
				ksvalidate(t, []byte(bp.Customizations.Installer.Kickstart.Contents), distro)
				if err := blueprints.BootcUnsupported(distro, arch, "anaconda-iso", bp.Customizations); err != nil {
					t.Errorf("osbuild/images' bootc anaconda-iso does not take %s: %v", output.BIBConfigFile, err)
				}
				if tc.hard.FIPS != (bp.Customizations.FIPS != nil && *bp.Customizations.FIPS) {
					t.Errorf("%s: customizations.fips %v, want %v (the installer boots with fips=1)", output.BIBConfigFile, bp.Customizations.FIPS, tc.hard.FIPS)
				}
			}
			checkHardenedOutputs(t, tc, out, files)
		})
	}
}

// checkHardenedOutputs asserts what each output must hold, beside the
// goldens: fips=1 and the arguments in order on every kernel command line
// that is written, and the CIS tailoring for the plan's RHEL major.
func checkHardenedOutputs(t *testing.T, tc hardeningCase, out *output.Dir, files map[string][]byte) {
	t.Helper()
	cmdline := strings.Join(tc.hard.KernelArgs, " ")
	if ks := files[output.KickstartFile]; ks != nil {
		want := cmdline
		if tc.hard.FIPS {
			want = strings.TrimSpace("fips=1 " + cmdline)
		}
		if !strings.Contains(string(ks), `bootloader --append="`+want+`"`+"\n") {
			t.Errorf("%s lacks bootloader --append=%q", output.KickstartFile, want)
		}
		rhel9 := strings.HasPrefix(out.Plan.Target.Distro, "rhel-9")
		if got := strings.Contains(string(ks), "fips-mode-setup"); got != (tc.hard.FIPS && rhel9 && !tc.opts.Bootc) {
			t.Errorf("%s runs fips-mode-setup: %v (FIPS %v, RHEL 9 %v, bootc %v)", output.KickstartFile, got, tc.hard.FIPS, rhel9, tc.opts.Bootc)
		}
	}
	if cf := files[output.Containerfile]; cf != nil {
		s := string(cf)
		if got := strings.Contains(s, `'kargs = ["fips=1"]'`) && strings.Contains(s, `'match-architectures = ["x86_64"]'`) && strings.Contains(s, "update-crypto-policies --no-reload --set FIPS"); got != tc.hard.FIPS {
			t.Errorf("the Containerfile sets FIPS mode as upstream's *-fips.containerfile: %v, want %v", got, tc.hard.FIPS)
		}
		if len(tc.hard.KernelArgs) > 0 && !strings.Contains(s, `'kargs = ["console=ttyS0,115200n8", "audit=1", "audit_backlog_limit=8192"]'`) {
			t.Error("the Containerfile lacks the kargs.d file of --karg")
		}
	}
	for _, name := range []string{output.BlueprintFile, output.InstallerBlueprintFile} {
		data := files[name]
		if data == nil {
			continue
		}
		var bp blueprint.Blueprint
		if _, err := toml.Decode(string(data), &bp); err != nil {
			t.Fatal(err)
		}
		c := bp.Customizations
		if tc.hard.FIPS && (c == nil || c.FIPS == nil || !*c.FIPS) {
			t.Errorf("%s lacks customizations.fips", name)
		}
		if c != nil && c.Kernel != nil && c.Kernel.Append != cmdline {
			t.Errorf("%s: customizations.kernel.append = %q, want %q (osbuild adds fips=1 itself)", name, c.Kernel.Append, cmdline)
		}
		if tc.hard.CIS != "" && name == output.BlueprintFile {
			if c == nil || c.OpenSCAP == nil || c.OpenSCAP.Tailoring == nil {
				t.Fatalf("%s lacks customizations.openscap with its tailoring", name)
			}
			if !slices.Contains(c.OpenSCAP.Tailoring.Unselected, "sysctl_net_ipv4_ip_forward") || !slices.Contains(c.OpenSCAP.Tailoring.Unselected, "sysctl_net_ipv6_conf_all_forwarding") {
				t.Errorf("the tailoring keeps IP forwarding off: %q", c.OpenSCAP.Tailoring.Unselected)
			}
			rhel10 := strings.HasPrefix(out.Plan.Target.Distro, "rhel-10")
			if got := slices.Contains(c.OpenSCAP.Tailoring.Unselected, "sysctl_net_ipv4_conf_all_forwarding"); got != rhel10 {
				t.Errorf("per-interface forwarding unselected: %v, want %v on %s (RHEL 10's benchmark only)", got, rhel10, out.Plan.Target.Distro)
			}
			if c.Services == nil || !slices.Contains(c.Services.Enabled, compose.CISAuditUnit) {
				t.Errorf("%s does not enable %s", name, compose.CISAuditUnit)
			}
		}
	}
	if tc.hard.CIS != "" {
		notes := string(files["notes.txt"])
		for _, want := range []string{"CIS: unavoidable: a scan of the running device fails", "dir_perms_world_writable_sticky_bits", compose.CISAuditUnit} {
			if !strings.Contains(notes, want) {
				t.Errorf("the plan's notes lack %q:\n%s", want, notes)
			}
		}
	}
}

// validateBlueprint decodes a written blueprint and has osbuild/images
// validate it for its image type.
func validateBlueprint(t *testing.T, data []byte, distro, imageType string, arch releases.Arch, ost *blueprints.OSTreeOptions) {
	t.Helper()
	var bp blueprint.Blueprint
	if _, err := toml.Decode(string(data), &bp); err != nil {
		t.Fatalf("decoding the blueprint: %v", err)
	}
	if _, err := blueprints.ValidateImage(&bp, distro, imageType, arch, ost); err != nil {
		t.Errorf("osbuild/images refuses the %s blueprint for %s: %v", imageType, distro, err)
	}
}

// ksvalidate runs pykickstart's validator for the distro's RHEL major.
func ksvalidate(t *testing.T, ks []byte, distro string) {
	t.Helper()
	version := "RHEL9"
	if strings.HasPrefix(distro, "rhel-10") || strings.HasPrefix(distro, "centos-10") {
		version = "RHEL10"
	}
	tool := testutil.Shared(t, "tools", "ksvalidator")
	file := filepath.Join(t.TempDir(), "microshift.ks")
	if err := os.WriteFile(file, ks, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "-v", version, file).CombinedOutput()
	if err != nil || strings.Contains(string(out), "rror") {
		t.Fatalf("ksvalidator -v %s refuses the kickstart: %v\n%s\n--- kickstart:\n%s", version, err, out, ks)
	}
}

// TestHardeningErrors: what a release, arch, distro or image type cannot
// honour is refused with one line naming the flag and why, and no output.
func TestHardeningErrors(t *testing.T) {
	cat := assembletest.Catalog(t)
	ostree := &blueprints.OSTreeOptions{URL: "http://edge.example.com/repo"}
	for _, tc := range []struct {
		name    string
		stream  string
		arch    releases.Arch
		distro  string
		profile string
		hard    compose.HardeningOptions
		opts    assemble.Options
		err     string
		cannot  bool // a CannotHonourError at Resolve
	}{
		{name: "FIPS on aarch64", stream: "5.0", arch: releases.AArch64, hard: compose.HardeningOptions{FIPS: true}, cannot: true,
			err: "--fips: MicroShift 5.0 runs in FIPS mode on x86_64 only, not aarch64: upstream tests FIPS mode on x86_64 and skips aarch64"},
		{name: "FIPS before upstream tests it", stream: "4.14", profile: "full", hard: compose.HardeningOptions{FIPS: true}, cannot: true,
			err: "has no FIPS mode microshift-compose knows of: upstream tests MicroShift in FIPS mode from 4.15"},
		{name: "FIPS bootc on 4.18", stream: "4.18", profile: "full", hard: compose.HardeningOptions{FIPS: true}, opts: assemble.Options{Bootc: true},
			err: `--fips with --bootc: MicroShift 4.18 cannot run in FIPS mode from a bootc image: upstream's 4.18 bootc FIPS scenario is disabled`},
		{name: "CIS profile the distro lacks", stream: "5.0", hard: compose.HardeningOptions{CIS: "cis_server_l3"}, cannot: true,
			err: `--cis "cis_server_l3": rhel-9.8 has no OpenSCAP profile xccdf_org.ssgproject.content_profile_cis_server_l3 (osbuild/images allows the CIS profiles cis, cis_server_l1, cis_workstation_l1, cis_workstation_l2 for it); did you mean "cis_server_l1"?`},
		{name: "CIS, not a CIS profile", stream: "5.0", hard: compose.HardeningOptions{CIS: "stig"},
			err: `--cis "stig" is not a CIS profile`},
		{name: "CIS on an ostree commit", stream: "5.0", hard: compose.HardeningOptions{CIS: compose.CISLevel2},
			err: "--cis: osbuild's edge-commit for rhel-9.8/x86_64 cannot run OpenSCAP remediation: it builds an rpm-ostree commit, and osbuild runs OpenSCAP remediation on package-based images only (osbuild/images: customizations.openscap: not supported); use an --image-type that takes customizations.openscap: ami,"},
		{name: "CIS on an installer of a commit", stream: "5.0", hard: compose.HardeningOptions{CIS: compose.CISLevel2}, opts: assemble.Options{ImageType: "edge-installer", Installer: assemble.InstallerOptions{OSTree: ostree}},
			err: "--cis: osbuild's edge-commit for rhel-9.8/x86_64 cannot run OpenSCAP remediation: it builds an rpm-ostree commit"},
		{name: "CIS with bootc", stream: "5.0", hard: compose.HardeningOptions{CIS: compose.CISLevel2}, opts: assemble.Options{Bootc: true, ImageType: "qcow2"},
			err: "--cis with --bootc: the Containerfile's bootc image cannot be remediated with OpenSCAP: osbuild/images remediates while it builds a package-based image, and image-builder's bootc image types (bootc-image-builder's too) take no customizations.openscap (osbuild/images: customizations.openscap: not supported)"},
		{name: "CIS with bootc only (RHEL 10)", stream: "5.0", distro: "rhel-10.2", hard: compose.HardeningOptions{CIS: compose.CISLevel2}, opts: assemble.Options{Bootc: true},
			err: "--cis with --bootc: the Containerfile's bootc image cannot be remediated"},
		{name: "kernel arguments nothing takes", stream: "5.0", hard: compose.HardeningOptions{KernelArgs: []string{"quiet"}},
			err: "--karg: no output takes kernel arguments: osbuild's edge-commit has no customizations.kernel.append (an ostree commit's kernel command line is set where it is deployed); add --kickstart, --bootc, or an --image-type that takes them ("},
		{name: "kernel argument with a newline", stream: "5.0", hard: compose.HardeningOptions{KernelArgs: []string{"quiet\ninit=/bin/sh"}},
			err: `--karg "quiet\ninit=/bin/sh": invalid kernel argument: a newline in its key`},
		{name: "kernel argument given twice", stream: "5.0", hard: compose.HardeningOptions{KernelArgs: []string{"quiet", "quiet"}},
			err: `--karg "quiet": invalid kernel argument: given twice`},
		{name: "kernel arguments in conflict", stream: "5.0", hard: compose.HardeningOptions{KernelArgs: []string{"audit=1", "audit=0"}},
			err: `--karg "audit=0": invalid kernel argument: conflicts with --karg "audit=1"`},
		{name: "fips=1 as a kernel argument", stream: "5.0", hard: compose.HardeningOptions{KernelArgs: []string{"fips=1"}},
			err: `--karg "fips=1": invalid kernel argument: fips is set by --fips`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arch := tc.arch
			if arch == "" {
				arch = releases.X86_64
			}
			profile := tc.profile
			if profile == "" {
				profile = "minimal"
			}
			req := compose.Request{Profile: profile, Arch: arch, Distro: tc.distro, Hardening: tc.hard}
			if err := tc.hard.Validate(); err != nil {
				check(t, err, tc.err)
				return
			}
			p, err := assemble.Plan(context.Background(), cat, assembletest.Release(t, tc.stream), req)
			if err != nil {
				var cannot *compose.CannotHonourError
				if errors.As(err, &cannot) != tc.cannot {
					t.Errorf("CannotHonourError: %v, want %v (%v)", !tc.cannot, tc.cannot, err)
				}
				check(t, err, tc.err)
				return
			}
			if tc.cannot {
				t.Fatalf("Resolve succeeded; want %q", tc.err)
			}
			out, err := assemble.Build(context.Background(), p, tc.opts)
			if out != nil {
				t.Errorf("Build returned %d files with its error", len(out.Files))
			}
			check(t, err, tc.err)
		})
	}
}

func check(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v; want one containing %q", err, want)
	}
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Errorf("the message is not one line: %q", err)
	}
}

// TestHardeningPlan: the plan records the hardening (the lock's
// "hardening"), FIPS config under the source --fips where the release
// needs it, and every kernel argument as given, in order.
func TestHardeningPlan(t *testing.T) {
	cat := assembletest.Catalog(t)
	for _, tc := range []struct {
		stream    string
		fipsNotes bool // the release needs a router TLS profile under FIPS
	}{
		{"4.18", false}, {"4.19", true}, {"4.21", true}, {"5.0", false},
	} {
		t.Run(tc.stream, func(t *testing.T) {
			p := assembletest.Plan(t, cat, assembletest.Release(t, tc.stream), compose.Request{Profile: "full", Arch: releases.X86_64, Hardening: compose.HardeningOptions{FIPS: true, KernelArgs: []string{"b=2", "a=1"}}})
			h := p.Hardening
			if h == nil || h.FIPS == nil || !slices.Equal(h.KernelArgs, []string{"b=2", "a=1"}) || !slices.Equal(h.KernelCommandLine(), []string{"fips=1", "b=2", "a=1"}) {
				t.Fatalf("plan hardening = %+v", h)
			}
			var fromFIPS []plan.ConfigSetting
			for _, c := range p.ConfigSources {
				if c.Source == compose.FIPSConfigSource {
					fromFIPS = append(fromFIPS, c)
				}
			}
			if got := len(fromFIPS) > 0; got != tc.fipsNotes {
				t.Errorf("config set by --fips: %v, want %v", fromFIPS, tc.fipsNotes)
			}
			for _, c := range fromFIPS {
				if !strings.HasPrefix(c.Path, "ingress.tlsSecurityProfile.") {
					t.Errorf("--fips sets %s", c.Path)
				}
				if c.Path == "ingress.tlsSecurityProfile.custom.ciphers" {
					if s, _ := c.Value.([]any); slices.Contains(s, any("TLS_CHACHA20_POLY1305_SHA256")) {
						t.Errorf("the FIPS cipher list holds TLS_CHACHA20_POLY1305_SHA256: %v", s)
					}
				}
			}
		})
	}
}

// TestHardeningIDs: the hardening is part of the composition ID: each
// option changes it, the order of kernel arguments too, and the names of
// one CIS profile give one ID.
func TestHardeningIDs(t *testing.T) {
	cat := assembletest.Catalog(t)
	rel := assembletest.Release(t, "5.0")
	qcow2 := assemble.Options{ImageType: "qcow2"}
	id := func(h compose.HardeningOptions) string {
		return buildID(t, cat, rel, compose.Request{Profile: "minimal", Arch: releases.X86_64, Hardening: h}, nil, qcow2)
	}
	seen := map[string]string{}
	for _, tc := range []struct {
		name string
		h    compose.HardeningOptions
	}{
		{"none", compose.HardeningOptions{}},
		{"--fips", compose.HardeningOptions{FIPS: true}},
		{"--karg a=1", compose.HardeningOptions{KernelArgs: []string{"a=1"}}},
		{"--karg a=2", compose.HardeningOptions{KernelArgs: []string{"a=2"}}},
		{"--karg a=1 --karg b=1", compose.HardeningOptions{KernelArgs: []string{"a=1", "b=1"}}},
		{"--karg b=1 --karg a=1", compose.HardeningOptions{KernelArgs: []string{"b=1", "a=1"}}},
		{"--cis level1", compose.HardeningOptions{CIS: compose.CISLevel1}},
		{"--cis level2", compose.HardeningOptions{CIS: compose.CISLevel2}},
		{"--cis level2 --fips", compose.HardeningOptions{CIS: compose.CISLevel2, FIPS: true}},
	} {
		got := id(tc.h)
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: ID %s is the ID of %s too", tc.name, got, prev)
		}
		seen[got] = tc.name
	}
	level2 := id(compose.HardeningOptions{CIS: compose.CISLevel2})
	for _, name := range []string{"cis", compose.CISProfilePrefix + "cis"} {
		if got := id(compose.HardeningOptions{CIS: name}); got != level2 {
			t.Errorf("--cis %s: ID %s, want --cis level2's %s", name, got, level2)
		}
	}
}

// TestCISAuditUnit: the first-boot unit runs the guide's regeneration
// once, and its script is valid bash.
func TestCISAuditUnit(t *testing.T) {
	p := assembletest.Plan(t, assembletest.Catalog(t), assembletest.Release(t, "5.0"), compose.Request{Profile: "minimal", Arch: releases.X86_64, Hardening: compose.HardeningOptions{CIS: compose.CISLevel2}})
	var unit, script []byte
	for _, f := range p.Files {
		switch f.Path {
		case compose.CISAuditUnitPath:
			unit = f.Data
		case compose.CISAuditScriptPath:
			script = f.Data
			if f.Mode != "0755" {
				t.Errorf("%s mode %s", f.Path, f.Mode)
			}
		}
	}
	if unit == nil || script == nil {
		t.Fatalf("want %s and %s among the plan's files", compose.CISAuditUnitPath, compose.CISAuditScriptPath)
	}
	for _, want := range []string{"ExecStart=/usr/bin/bash " + compose.CISAuditScriptPath + "\n", "ConditionPathExists=!", "WantedBy=multi-user.target\n", "After=auditd.service\n"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("the unit lacks %q", want)
		}
	}
	for _, want := range []string{`find / -xdev \( -perm -4000 -o -perm -2000 \) -type f`, "-F perm=x -F auid>=1000 -F auid!=unset -k privileged", compose.CISAuditRulesPath, "augenrules --load"} {
		if !strings.Contains(string(script), want) {
			t.Errorf("the script lacks %q (MicroShift's CIS guide)", want)
		}
	}
	file := filepath.Join(t.TempDir(), path.Base(compose.CISAuditScriptPath))
	testutil.WriteFile(t, file, script)
	if out, err := exec.Command("bash", "-n", file).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v\n%s", err, out)
	}
}
