package sbom_test

import (
	"bytes"
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/spdx/tools-golang/spdx"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/render/sbom"
)

var update = flag.Bool("update", false, "rewrite golden files")

// nevraPlan pins MicroShift's RPMs to a shipped version whose release
// files came from release-info RPMs (release fetch, release import), so
// their build is known.
func nevraPlan() *plan.Plan {
	p := oddPlan()
	p.ID = strings.Repeat("c", 64)
	p.Release.Pin = plan.PinExact
	p.Release.RPMs = []plan.ReleaseRPM{
		{NEVRA: "microshift-release-info-4.18.7-1.el9.noarch", SHA256: strings.Repeat("d", 64)},
		{NEVRA: "microshift-olm-release-info-4.18.7-1.el9.noarch", SHA256: strings.Repeat("e", 64)},
	}
	p.Packages = append(p.Packages,
		plan.Package{Name: "microshift-release-info", Version: "4.18.7", Components: []string{"core"}},
		plan.Package{Name: "microshift-selinux", Version: "4.18.7", Components: []string{"core"}},
	)
	return p
}

// TestGolden: the SPDX and CycloneDX documents of two plans are the golden
// files (go test ./render/sbom -update rewrites them), and each is read
// by its format's schema and reader.
func TestGolden(t *testing.T) {
	opts := sbom.Options{Created: time.Unix(1700000000, 0), ToolVersion: "v1.2.3"}
	for name, p := range map[string]*plan.Plan{"odd": oddPlan(), "nevra": nevraPlan()} {
		lock := []byte(name + "\n")
		spdxData, err := sbom.Encode(p, lock, opts)
		if err != nil {
			t.Fatal(err)
		}
		testutil.CheckSPDX(t, name+".spdx.json", spdxData)
		testutil.Golden(t, filepath.Join("testdata", "golden", name+".spdx.json"), spdxData, *update, "go test ./render/sbom -update")
		cdxData, err := sbom.EncodeCycloneDX(p, lock, opts)
		if err != nil {
			t.Fatal(err)
		}
		testutil.CheckCycloneDX(t, name+".cdx.json", cdxData)
		testutil.Golden(t, filepath.Join("testdata", "golden", name+".cdx.json"), cdxData, *update, "go test ./render/sbom -update")
	}
}

// TestCycloneDX: what the CycloneDX document says of each part of the
// plan, as cyclonedx-go reads it back.
func TestCycloneDX(t *testing.T) {
	p := oddPlan()
	data, err := sbom.EncodeCycloneDX(p, []byte("{}\n"), sbom.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bom := testutil.CheckCycloneDX(t, "sbom.cdx.json", data)
	if bom.Metadata.Timestamp != "1970-01-01T00:00:00Z" {
		t.Errorf("timestamp = %s, want the Unix epoch without SOURCE_DATE_EPOCH", bom.Metadata.Timestamp)
	}
	root := bom.Metadata.Component
	if root == nil || root.Type != cdx.ComponentTypeOS || root.Name != "microshift-minimal-custom-aarch64" || root.Version != "4.18.7" {
		t.Fatalf("metadata.component = %+v, want the composition as an operating system", root)
	}
	byRef := map[string]cdx.Component{}
	for _, c := range *bom.Components {
		if _, dup := byRef[c.BOMRef]; dup {
			t.Errorf("bom-ref %s used twice", c.BOMRef)
		}
		byRef[c.BOMRef] = c
	}
	tests := []struct {
		ref, typ, purl, version, hash string
	}{
		{"component:core", "application", "", "", ""},
		{"rpm:microshift", "library", "pkg:rpm/redhat/microshift@4.18.7?distro=rhel-9.4", "4.18.7", ""},
		{"rpm:orphan", "library", "pkg:rpm/redhat/orphan?distro=rhel-9.4", "1.*", ""},
		{"image:serving-0123456789ab", "container", "pkg:oci/serving@" + strings.Replace(digest, ":", "%3A", 1) + "?repository_url=quay.io%2Forg%2Fserving", digest, strings.TrimPrefix(digest, "sha256:")},
		{"image:ovms-" + "", "container", "pkg:oci/ovms?repository_url=registry.example.com%3A5000%2Fmodels%2Fovms&tag=2025.1", "2025.1", ""},
		{"chart:podinfo-6.9.2", "file", "", "6.9.2", strings.Repeat("ab", 32)},
	}
	for _, tc := range tests {
		var c *cdx.Component
		for ref, comp := range byRef {
			if ref == tc.ref || (strings.HasSuffix(tc.ref, "-") && strings.HasPrefix(ref, tc.ref)) {
				comp := comp
				c = &comp
			}
		}
		if c == nil {
			t.Errorf("no component %s", tc.ref)
			continue
		}
		if string(c.Type) != tc.typ || c.PackageURL != tc.purl || c.Version != tc.version {
			t.Errorf("%s = type %s, purl %s, version %s; want %s, %s, %s", tc.ref, c.Type, c.PackageURL, c.Version, tc.typ, tc.purl, tc.version)
		}
		var hash string
		if c.Hashes != nil && len(*c.Hashes) == 1 && (*c.Hashes)[0].Algorithm == cdx.HashAlgoSHA256 {
			hash = (*c.Hashes)[0].Value
		}
		if hash != tc.hash {
			t.Errorf("%s: SHA-256 %q, want %q", tc.ref, hash, tc.hash)
		}
	}
	deps := map[string][]string{}
	for _, d := range *bom.Dependencies {
		deps[d.Ref] = *d.Dependencies
	}
	for _, r := range []struct{ from, to string }{
		{"composition", "component:core"},
		{"composition", "component:ai-model"},
		{"composition", "rpm:orphan"},
		{"component:core", "rpm:microshift"},
		{"component:ai-model", "image:serving-0123456789ab"},
		{"component:ai-model", "chart:podinfo-6.9.2"},
	} {
		if !contains(deps[r.from], r.to) {
			t.Errorf("%s does not depend on %s (%v)", r.from, r.to, deps[r.from])
		}
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// TestNEVRA: an RPM pinned to a build the plan records has its
// [epoch:]version-release; the recorded RPM itself its exact NEVRA, arch
// and .rpm sha256, in both formats.
func TestNEVRA(t *testing.T) {
	p := nevraPlan()
	doc := testutil.CheckSPDX(t, "sbom.spdx.json", mustEncode(t, p))
	pkgs := map[string]*spdx.Package{}
	for _, sp := range doc.Packages {
		pkgs[sp.PackageName] = sp
	}
	ri := pkgs["microshift-release-info"]
	if ri == nil || ri.PackageVersion != "4.18.7-1.el9" || ri.PackageFileName != "microshift-release-info-4.18.7-1.el9.noarch.rpm" ||
		ri.PackageExternalReferences[0].Locator != "pkg:rpm/redhat/microshift-release-info@4.18.7-1.el9?arch=noarch&distro=rhel-9.4" ||
		len(ri.PackageChecksums) != 1 || ri.PackageChecksums[0].Value != strings.Repeat("d", 64) {
		t.Errorf("release-info = %+v", ri)
	}
	se := pkgs["microshift-selinux"]
	if se == nil || se.PackageVersion != "4.18.7-1.el9" || se.PackageExternalReferences[0].Locator != "pkg:rpm/redhat/microshift-selinux@4.18.7-1.el9?distro=rhel-9.4" || len(se.PackageChecksums) != 0 {
		t.Errorf("selinux = %+v", se)
	}
	// Not pinned to the release's version: the constraint, as before.
	if or := pkgs["orphan"]; or.PackageVersion != "1.*" {
		t.Errorf("orphan = %+v", or)
	}
	// A stream pin never claims a build.
	p.Release.Pin = plan.PinStream
	doc = testutil.CheckSPDX(t, "sbom.spdx.json", mustEncode(t, p))
	for _, sp := range doc.Packages {
		if sp.PackageName == "microshift-selinux" && sp.PackageVersion != "4.18.7" {
			t.Errorf("stream pin: selinux versionInfo = %s", sp.PackageVersion)
		}
	}

	data, err := sbom.EncodeCycloneDX(nevraPlan(), nil, sbom.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bom := testutil.CheckCycloneDX(t, "sbom.cdx.json", data)
	for _, c := range *bom.Components {
		if c.Name == "microshift-release-info" && (c.Version != "4.18.7-1.el9" || c.PackageURL != "pkg:rpm/redhat/microshift-release-info@4.18.7-1.el9?arch=noarch&distro=rhel-9.4") {
			t.Errorf("CycloneDX release-info = %+v", c)
		}
	}
}

func mustEncode(t *testing.T, p *plan.Plan) []byte {
	t.Helper()
	data, err := sbom.Encode(p, nil, sbom.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestCycloneDXDeterministic: the same plan and lock give the same bytes;
// another lock another serial number.
func TestCycloneDXDeterministic(t *testing.T) {
	a, _ := sbom.EncodeCycloneDX(oddPlan(), []byte("a"), sbom.Options{})
	b, _ := sbom.EncodeCycloneDX(oddPlan(), []byte("a"), sbom.Options{})
	if !bytes.Equal(a, b) {
		t.Fatal("two encodings of one plan differ")
	}
	c, _ := sbom.EncodeCycloneDX(oddPlan(), []byte("b"), sbom.Options{})
	serial := func(data []byte) string {
		return testutil.CheckCycloneDX(t, "x", data).SerialNumber
	}
	if serial(a) == serial(c) || !strings.HasPrefix(serial(a), "urn:uuid:") {
		t.Errorf("serial numbers %s and %s: want distinct urn:uuid values for distinct locks", serial(a), serial(c))
	}
}
