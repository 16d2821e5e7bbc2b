package blueprints_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/osbuild/blueprint/pkg/blueprint"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

func hardenedPlan(kargs ...string) *plan.Plan {
	p := testPlan("x86_64")
	p.Hardening = &plan.Hardening{
		FIPS:       &plan.FIPS{Arches: []string{"x86_64"}, BootcPackages: []string{"crypto-policies-scripts"}},
		KernelArgs: kargs,
		CIS:        &plan.CIS{Profile: "xccdf_org.ssgproject.content_profile_cis", Unselected: []string{"sysctl_net_ipv4_ip_forward"}},
	}
	return p
}

// kargsFiles runs, with bash, each printf the Containerfile writes a
// kargs.d file with, and returns what each file would hold by path.
func kargsFiles(t *testing.T, containerfile string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(containerfile, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != `printf '%s\n' \` {
			continue
		}
		cmd := `printf '%s\n'`
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "> "); i++ {
			cmd += " " + strings.TrimSuffix(strings.TrimSpace(lines[i]), ` \`)
		}
		path := strings.TrimPrefix(strings.TrimSpace(lines[i]), "> ")
		if !strings.HasPrefix(path, blueprints.BootcKargsDir+"/") {
			continue // another printf of the Containerfile
		}
		got, err := exec.Command("bash", "-c", cmd).Output()
		if err != nil {
			t.Fatalf("bash -c %q: %v", cmd, err)
		}
		out[path] = string(got)
	}
	return out
}

// TestContainerfileHardening: FIPS as upstream's *-fips.containerfile sets
// it, and the kernel arguments in a kargs.d file of their own: the files
// bash writes are the TOML bootc reads, with the arguments as given.
func TestContainerfileHardening(t *testing.T) {
	args := []string{"console=ttyS0,115200n8", "ip=[fd00::2]::[fd00::1]:64::eth0:none", "audit=1"}
	cf := string(blueprints.Containerfile(hardenedPlan(args...), "images.txt", func(s string) string { return "files" + s }, blueprints.BootcOptions{}))
	if again := string(blueprints.Containerfile(hardenedPlan(args...), "images.txt", func(s string) string { return "files" + s }, blueprints.BootcOptions{})); again != cf {
		t.Fatal("two Containerfiles of one plan differ")
	}
	files := kargsFiles(t, cf)
	for path, want := range map[string]blueprints.BootcKargsFile{
		blueprints.BootcFIPSKargs: {Kargs: []string{"fips=1"}, MatchArchitectures: []string{"x86_64"}},
		blueprints.BootcKargs:     {Kargs: args},
	} {
		var got blueprints.BootcKargsFile
		md, err := toml.Decode(files[path], &got)
		if err != nil || len(md.Undecoded()) > 0 {
			t.Fatalf("%s = %q: %v %v", path, files[path], err, md.Undecoded())
		}
		if !slices.Equal(got.Kargs, want.Kargs) || !slices.Equal(got.MatchArchitectures, want.MatchArchitectures) {
			t.Errorf("%s = %+v, want %+v", path, got, want)
		}
	}
	if !strings.Contains(cf, "RUN dnf install -y crypto-policies-scripts && \\\n    update-crypto-policies --no-reload --set FIPS && \\\n    dnf clean all\n") {
		t.Errorf("the Containerfile does not set the FIPS crypto policy as upstream:\n%s", cf)
	}
	if strings.Contains(cf, "oscap") || strings.Contains(cf, "openscap") {
		t.Error("the Containerfile runs OpenSCAP (build refuses --cis with --bootc)")
	}
	plain := string(blueprints.Containerfile(testPlan("x86_64"), "images.txt", func(s string) string { return "files" + s }, blueprints.BootcOptions{}))
	if strings.Contains(plain, "kargs.d") || strings.Contains(plain, "crypto-policies") {
		t.Error("a plan without hardening writes kargs.d or a crypto policy")
	}
}

// TestHardeningCustomizations: osbuild adds fips=1 itself with
// customizations.fips, so kernel.append holds the user's arguments only;
// the tailoring is a copy.
func TestHardeningCustomizations(t *testing.T) {
	p := hardenedPlan("quiet", "audit=1")
	h := blueprints.Hardening(p)
	if h.FIPS == nil || !*h.FIPS || h.Kernel == nil || h.Kernel.Append != "quiet audit=1" || h.OpenSCAP == nil || h.OpenSCAP.ProfileID != "xccdf_org.ssgproject.content_profile_cis" {
		t.Fatalf("Hardening = %+v", h)
	}
	h.OpenSCAP.Tailoring.Unselected[0] = "x"
	if p.Hardening.CIS.Unselected[0] != "sysctl_net_ipv4_ip_forward" {
		t.Error("the customization shares the plan's tailoring")
	}
	if got := blueprints.Hardening(testPlan("x86_64")); got != (blueprints.HardeningCustomizations{}) {
		t.Errorf("no hardening: %+v", got)
	}
	var keys []string
	for _, c := range h.Each() {
		keys = append(keys, c.Key)
	}
	if !slices.Equal(keys, []string{"customizations.fips", "customizations.kernel.append", "customizations.openscap"}) {
		t.Errorf("Each() keys = %q", keys)
	}
}

// TestOpenSCAPSupport: what build's refusals rest on, as osbuild/images
// says it: an rpm-ostree commit and bootc-image-builder's images take no
// OpenSCAP remediation, a package-based qcow2 does; RHEL 9 and 10 have
// the CIS profiles --cis names.
func TestOpenSCAPSupport(t *testing.T) {
	cis := &blueprint.Customizations{OpenSCAP: &blueprint.OpenSCAPCustomization{ProfileID: "xccdf_org.ssgproject.content_profile_cis"}}
	for _, distro := range []string{"rhel-9.6", "rhel-10.2"} {
		profiles := distros.OpenSCAPProfiles(distro)
		for _, want := range []string{"xccdf_org.ssgproject.content_profile_cis", "xccdf_org.ssgproject.content_profile_cis_server_l1"} {
			if !slices.Contains(profiles, want) {
				t.Errorf("%s: osbuild/images allows no %s (%q)", distro, want, profiles)
			}
		}
		if err := blueprints.BootcUnsupported(distro, releases.X86_64, "qcow2", cis); err == nil || !strings.Contains(err.Error(), "customizations.openscap") {
			t.Errorf("%s: bootc qcow2 takes customizations.openscap (%v)", distro, err)
		}
		if !slices.Contains(blueprints.ImageTypesTaking(distro, releases.X86_64, cis), "qcow2") {
			t.Errorf("%s: qcow2 takes no customizations.openscap", distro)
		}
	}
	it, err := distros.ImageType("rhel-9.6", "edge-commit", releases.X86_64)
	if err != nil {
		t.Fatal(err)
	}
	if err := blueprints.Unsupported(it, cis); err == nil {
		t.Error("edge-commit takes customizations.openscap")
	}
	on := true
	if err := blueprints.Unsupported(it, &blueprint.Customizations{FIPS: &on}); err != nil {
		t.Errorf("edge-commit does not take customizations.fips: %v", err)
	}
	if distros.OpenSCAPProfiles("no-such-distro-1") != nil {
		t.Error("profiles for an unknown distro")
	}
}

// FuzzBootcKargsFile: whatever the strings, the kargs.d file decodes back
// to them (the TOML encoder quotes; internal/kernelargs keeps the
// arguments that reach it plain anyway).
func FuzzBootcKargsFile(f *testing.F) {
	for _, s := range []string{"quiet", `a="b c"`, "a\nb", `\`, "'''", "\u2028", "#"} {
		f.Add(s, "x86_64")
	}
	f.Fuzz(func(t *testing.T, a, arch string) {
		if !utf8.ValidString(a) || !utf8.ValidString(arch) {
			t.Skip("TOML strings are UTF-8")
		}
		in := blueprints.BootcKargsFile{Kargs: []string{a, "audit=1"}, MatchArchitectures: []string{arch}}
		var out blueprints.BootcKargsFile
		if _, err := toml.Decode(string(in.Encode()), &out); err != nil {
			t.Fatalf("decoding %q: %v", in.Encode(), err)
		}
		if !slices.Equal(in.Kargs, out.Kargs) || !slices.Equal(in.MatchArchitectures, out.MatchArchitectures) {
			t.Fatalf("%+v encoded as %q decodes to %+v", in, in.Encode(), out)
		}
	})
}
