package blueprints_test

import (
	"bytes"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/osbuild/blueprint/pkg/blueprint"
	"github.com/osbuild/images/pkg/distro"
	"github.com/osbuild/images/pkg/ostree"

	"github.com/microshift-compose/microshift-compose/blueprints"
	"github.com/microshift-compose/microshift-compose/internal/distros"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

const (
	refCLI = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:babf8ef9b2d93713eb2dd748fa7bdc38084cd4930c06005b0a21c36bb538a3a8"
	refOVN = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:bb53ad99309af74f0fcad202e11562703b42a6008a4149da9d4c29d42ed2f241"
	refLVM = "registry.redhat.io/lvms4/lvms-rhel9-operator@sha256:be49109ec5be53a783b2de9bc6529db99930a69021577c05cfa0bf1312e06d69"
)

const dropIn = "network:\n  cniPlugin: ovnk\nstorage:\n  driver: lvms\n"

// testPlan is a hand-built plan with every kind of content a blueprint
// carries.
func testPlan(arch string) *plan.Plan {
	return &plan.Plan{
		Schema:  plan.Schema,
		Release: plan.Release{Version: "4.18.0", Stream: "4.18", Base: "4.18.0-0.nightly-2026-08-12-221652", Source: "embedded"},
		Arch:    arch,
		Profile: "full",
		Components: []plan.Component{
			{Name: "core", Order: 0}, {Name: "networking-ovnk", Order: 5}, {Name: "storage-lvms", Order: 10},
		},
		Packages: []plan.Package{
			{Name: "lvm2", Components: []string{"storage-lvms"}},
			{Name: "microshift", Version: "4.18.*", Components: []string{"core"}},
			{Name: "microshift-networking", Version: "4.18.*", Components: []string{"networking-ovnk"}},
		},
		Images: []plan.Image{
			{Ref: refCLI, Pinned: true}, {Ref: refOVN, Pinned: true}, {Ref: refLVM, Pinned: true},
		},
		Services: plan.Services{Enabled: []string{"microshift", "openvswitch"}, Disabled: []string{"firewalld-old"}},
		Firewall: plan.Firewall{
			Ports:          []string{"6443:tcp", "80:tcp", "30000-32767:tcp"},
			Services:       []string{"mdns"},
			TrustedSources: []string{"10.42.0.0/16", "169.254.169.1"},
		},
		Files: []plan.File{
			{Path: "/etc/microshift/config.d/10-microshift-compose.yaml", Mode: "0644", Data: []byte(dropIn)},
			{Path: "/etc/microshift/lvmd.yaml", Mode: "0600", Component: "storage-lvms", Data: []byte("deviceClasses: []\n")},
		},
	}
}

func TestFromPlan(t *testing.T) {
	trusted := "trusted"
	want := &blueprint.Blueprint{
		Name:        "microshift-full-x86_64",
		Description: "MicroShift 4.18, profile full, x86_64: core, networking-ovnk, storage-lvms",
		Version:     "4.18.0",
		Packages: []blueprint.Package{
			{Name: "lvm2"}, {Name: "microshift", Version: "4.18.*"}, {Name: "microshift-networking", Version: "4.18.*"},
		},
		Containers: []blueprint.Container{{Source: refCLI}, {Source: refOVN}, {Source: refLVM}},
		Customizations: &blueprint.Customizations{
			Services: &blueprint.ServicesCustomization{Enabled: []string{"microshift", "openvswitch"}, Disabled: []string{"firewalld-old"}},
			Firewall: &blueprint.FirewallCustomization{
				Ports:    []string{"6443:tcp", "80:tcp", "30000-32767:tcp"},
				Services: &blueprint.FirewallServicesCustomization{Enabled: []string{"mdns"}},
				Zones:    []blueprint.FirewallZoneCustomization{{Name: &trusted, Sources: []string{"10.42.0.0/16", "169.254.169.1"}}},
			},
			Files: []blueprint.FileCustomization{
				{Path: "/etc/microshift/config.d/10-microshift-compose.yaml", Mode: "0644", User: "root", Group: "root", Data: dropIn},
				{Path: "/etc/microshift/lvmd.yaml", Mode: "0600", User: "root", Group: "root", Data: "deviceClasses: []\n"},
			},
		},
	}
	got := blueprints.FromPlan(testPlan("x86_64"))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FromPlan() =\n%#v\nwant\n%#v", got, want)
	}
	if n := blueprints.Name(testPlan("aarch64")); n != "microshift-full-aarch64" {
		t.Errorf("Name(aarch64 plan) = %q", n)
	}
}

func TestFromPlanOmitsEmptyCustomizations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(p *plan.Plan)
		check  func(c *blueprint.Customizations) bool
	}{
		{"nothing", func(p *plan.Plan) { p.Services, p.Firewall, p.Files = plan.Services{}, plan.Firewall{}, nil },
			func(c *blueprint.Customizations) bool { return c == nil }},
		{"only files", func(p *plan.Plan) { p.Services, p.Firewall = plan.Services{}, plan.Firewall{} },
			func(c *blueprint.Customizations) bool {
				return c != nil && c.Services == nil && c.Firewall == nil && len(c.Files) == 2
			}},
		{"ports but no firewall services or zones", func(p *plan.Plan) { p.Firewall.Services, p.Firewall.TrustedSources = nil, nil },
			func(c *blueprint.Customizations) bool {
				return c.Firewall != nil && c.Firewall.Services == nil && c.Firewall.Zones == nil && len(c.Firewall.Ports) == 3
			}},
		{"only trusted sources", func(p *plan.Plan) { p.Firewall = plan.Firewall{TrustedSources: []string{"10.42.0.0/16"}} },
			func(c *blueprint.Customizations) bool {
				return c.Firewall != nil && c.Firewall.Ports == nil && len(c.Firewall.Zones) == 1 && *c.Firewall.Zones[0].Name == "trusted"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPlan("x86_64")
			tc.modify(p)
			bp := blueprints.FromPlan(p)
			if !tc.check(bp.Customizations) {
				t.Errorf("customizations = %#v", bp.Customizations)
			}
		})
	}
}

func TestEncode(t *testing.T) {
	bp := blueprints.FromPlan(testPlan("x86_64"))
	a, err := blueprints.Encode(bp)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		b, err := blueprints.Encode(blueprints.FromPlan(testPlan("x86_64")))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("Encode is not deterministic (run %d): %v\n%s\n---\n%s", i, err, a, b)
		}
	}
	if !strings.HasPrefix(string(a), "# osbuild blueprint generated by microshift-compose; do not edit.\n") {
		t.Errorf("Encode() lacks the header:\n%s", a)
	}
	for _, s := range []string{
		`name = "microshift-full-x86_64"`,
		"[[packages]]\nname = \"microshift\"\nversion = \"4.18.*\"\n",
		"[[containers]]\nsource = \"" + refCLI + "\"\n",
		"[[customizations.files]]\npath = \"/etc/microshift/config.d/10-microshift-compose.yaml\"\n",
		"[[customizations.firewall.zones]]\nname = \"trusted\"\nsources = [\"10.42.0.0/16\", \"169.254.169.1\"]\n",
	} {
		if !strings.Contains(string(a), s) {
			t.Errorf("Encode() output lacks %q:\n%s", s, a)
		}
	}
	var back blueprint.Blueprint
	md, err := toml.Decode(string(a), &back)
	if err != nil {
		t.Fatalf("decoding Encode() output: %v", err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		t.Errorf("keys osbuild's blueprint type does not know: %v", und)
	}
	if !reflect.DeepEqual(&back, bp) {
		t.Errorf("decoded blueprint differs:\n got %#v\nwant %#v", back, *bp)
	}
}

func TestValidate(t *testing.T) {
	for _, arch := range releases.Arches {
		t.Run("good/"+string(arch), func(t *testing.T) {
			bp := blueprints.FromPlan(testPlan(string(arch)))
			if _, err := blueprints.Validate(bp, distros.DefaultDistro, distros.DefaultImageType, arch); err != nil {
				t.Fatalf("Validate(rhel-9.6 edge-commit %s) = %v", arch, err)
			}
		})
	}
	// osbuild accepts the dotless spelling of a RHEL release as an alias.
	if _, err := blueprints.Validate(blueprints.FromPlan(testPlan("x86_64")), "rhel-96", "edge-commit", releases.X86_64); err != nil {
		t.Errorf("Validate(rhel-96) = %v; osbuild reads it as rhel-9.6", err)
	}

	usr := testPlan("x86_64")
	usr.Files = append(usr.Files, plan.File{Path: "/usr/lib/microshift/manifests.d/050-extra/kustomization.yaml", Mode: "0644", Data: []byte("resources: []\n")})
	for _, tc := range []struct {
		name, distro, imageType string
		arch                    releases.Arch
		bp                      *blueprint.Blueprint
		want                    string
	}{
		{"file under /usr", "rhel-9.6", "edge-commit", releases.X86_64, blueprints.FromPlan(usr),
			`osbuild rejects blueprint microshift-full-x86_64 for rhel-9.6 edge-commit/x86_64: blueprint validation failed for image type "edge-commit": the following custom files are not allowed: ["/usr/lib/microshift/manifests.d/050-extra/kustomization.yaml"]`},
		{"distro typo", "rhel9.6", "edge-commit", releases.X86_64, nil, `unknown distro "rhel9.6"; did you mean "rhel-9.6"?`},
		{"distro typo fedora", "fedroa-42", "edge-commit", releases.X86_64, nil, `unknown distro "fedroa-42"; did you mean "fedora-42"?`},
		{"unknown distro", "ubuntu-24.04", "edge-commit", releases.X86_64, nil,
			`unknown distro "ubuntu-24.04" (for example rhel-9.4, rhel-9.6, rhel-9.7, rhel-10.0, rhel-10.1, centos-9, centos-10, fedora-42, fedora-43)`},
		{"image type typo", "rhel-9.6", "edge-comit", releases.X86_64, nil, `unknown image type "edge-comit" for rhel-9.6/x86_64; did you mean "edge-commit"?`},
		{"image type typo aarch64", "rhel-9.6", "edge-containr", releases.AArch64, nil, `unknown image type "edge-containr" for rhel-9.6/aarch64; did you mean "edge-container"?`},
		{"unsupported arch", "rhel-9.6", "edge-commit", releases.Arch("riscv64"), nil, `distro rhel-9.6 does not support riscv64`},
		{"image type not on arch", "rhel-9.6", "edge-commit", releases.Arch("s390x"), nil,
			`unknown image type "edge-commit" for rhel-9.6/s390x (have network-installer, qcow2, tar)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bp := tc.bp
			if bp == nil {
				bp = blueprints.FromPlan(testPlan(string(tc.arch)))
			}
			_, err := blueprints.Validate(bp, tc.distro, tc.imageType, tc.arch)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Validate() = %v\nwant %q", err, tc.want)
			}
		})
	}
}

// TestNoHostFIPSWarning: osbuild/images warns, for a FIPS image, that the
// host generating the manifest is not in FIPS mode; the image is built on
// another host, so validation does not pass that warning on.
func TestNoHostFIPSWarning(t *testing.T) {
	on := true
	bp := blueprints.FromPlan(testPlan("x86_64"))
	bp.Customizations.FIPS = &on
	it, err := distros.ImageType("rhel-9.6", "edge-commit", releases.X86_64)
	if err != nil {
		t.Fatal(err)
	}
	seed := int64(0)
	_, raw, err := it.Manifest(bp, distro.ImageOptions{OSTree: &ostree.ImageOptions{}}, nil, &seed)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile("/proc/sys/crypto/fips_enabled"); strings.TrimSpace(string(data)) != "1" && !slices.ContainsFunc(raw, func(w string) bool { return strings.Contains(w, "FIPS mode") }) {
		t.Fatalf("osbuild/images no longer warns about the host's FIPS mode (%q): the filter can go", raw)
	}
	warnings, err := blueprints.Validate(bp, "rhel-9.6", "edge-commit", releases.X86_64)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range warnings {
		if strings.Contains(w, "FIPS mode") {
			t.Errorf("validation passes on osbuild's warning about this host: %q", w)
		}
	}
}
