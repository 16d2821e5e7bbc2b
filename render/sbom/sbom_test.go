package sbom_test

import (
	"strings"
	"testing"
	"time"

	"github.com/spdx/tools-golang/spdx"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/render/sbom"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// oddPlan has what the embedded catalog does not: an exact RPM pin, an RPM
// whose name an SPDX ID cannot hold, a tag-only image, two images under one
// key, an image and an RPM no selected component claims, a Helm chart, and
// a --with.
func oddPlan() *plan.Plan {
	return &plan.Plan{
		Release: plan.Release{Version: "4.18.7", Stream: "4.18", Base: "4.18.7", Distro: "rhel-9.4"},
		Arch:    "aarch64",
		Target:  plan.Target{Distro: "rhel-9.4"},
		Profile: "minimal",
		With:    []string{"ai_model"},
		Components: []plan.Component{
			{Name: "core", Description: "MicroShift", Reasons: []plan.Reason{{Kind: plan.ReasonProfile, Profile: "minimal"}}},
			{Name: "ai_model", Description: "model serving", Reasons: []plan.Reason{{Kind: plan.ReasonWith}}},
		},
		Packages: []plan.Package{
			{Name: "microshift", Version: "4.18.7", Components: []string{"core"}},
			{Name: "libstdc++", Version: "", Components: []string{"ai_model", "core"}},
			{Name: "orphan", Version: "1.*"},
		},
		Images: []plan.Image{
			{Ref: "quay.io/org/serving@" + digest, Pinned: true, Uses: []plan.ImageUse{{Component: "ai_model", File: "release-ai-model-serving-aarch64.json", Key: "serving"}}},
			{Ref: "quay.io/org/other@sha256:" + strings.Repeat("1", 64), Pinned: true, Uses: []plan.ImageUse{{Component: "core", File: "release-aarch64.json", Key: "serving"}}},
			{Ref: "registry.example.com:5000/models/ovms:2025.1", Uses: []plan.ImageUse{{Component: "ai_model", File: "release-ai-model-serving-aarch64.json", Key: "ovms"}}},
			{Ref: "docker.io/library/busybox@" + digest, Pinned: true},
		},
		Charts: []plan.Chart{{Component: "ai_model", Name: "podinfo", Version: "6.9.2", File: "charts/podinfo-6.9.2.tgz", SHA256: strings.Repeat("ab", 32)}},
	}
}

func TestEncode(t *testing.T) {
	data, err := sbom.Encode(oddPlan(), []byte("{}\n"), sbom.Options{})
	if err != nil {
		t.Fatalf("Encode() = %v", err)
	}
	doc := testutil.CheckSPDX(t, "sbom.spdx.json", data)
	pkgs := map[string]*spdx.Package{}
	for _, p := range doc.Packages {
		pkgs[string(p.PackageSPDXIdentifier)] = p
	}
	rels := map[string]bool{}
	for _, r := range doc.Relationships {
		rels[string(r.RefA.ElementRefID)+" "+r.Relationship+" "+string(r.RefB.ElementRefID)] = true
	}
	purl := func(id string) string {
		t.Helper()
		p := pkgs[id]
		if p == nil {
			t.Fatalf("no package %s among %v", id, keys(pkgs))
		}
		if len(p.PackageExternalReferences) != 1 {
			t.Fatalf("%s: external refs %+v", id, p.PackageExternalReferences)
		}
		return p.PackageExternalReferences[0].Locator
	}
	tests := []struct{ id, purl string }{
		// An exact pin is the purl's version; a constraint is not.
		{"RPM-microshift", "pkg:rpm/redhat/microshift@4.18.7?distro=rhel-9.4"},
		{"RPM-libstdc", "pkg:rpm/redhat/libstdc%2B%2B?distro=rhel-9.4"},
		{"RPM-orphan", "pkg:rpm/redhat/orphan?distro=rhel-9.4"},
		// The name is the repository's last fragment.
		{"Image-serving-0123456789ab", "pkg:oci/serving@" + strings.Replace(digest, ":", "%3A", 1) + "?repository_url=quay.io%2Forg%2Fserving"},
		{"Image-serving-111111111111", "pkg:oci/other@sha256%3A" + strings.Repeat("1", 64) + "?repository_url=quay.io%2Forg%2Fother"},
		{"Image-busybox-0123456789ab", "pkg:oci/busybox@" + strings.Replace(digest, ":", "%3A", 1) + "?repository_url=index.docker.io%2Flibrary%2Fbusybox"},
	}
	for _, tc := range tests {
		if got := purl(tc.id); got != tc.purl {
			t.Errorf("%s purl = %s, want %s", tc.id, got, tc.purl)
		}
	}
	// The tag-only image: no checksum, the tag as version and qualifier.
	var tagOnly *spdx.Package
	for id, p := range pkgs {
		if strings.HasPrefix(id, "Image-ovms-") {
			tagOnly = p
		}
	}
	if tagOnly == nil {
		t.Fatal("no package for the tag-only image")
	}
	if len(tagOnly.PackageChecksums) != 0 || tagOnly.PackageVersion != "2025.1" || !strings.Contains(tagOnly.PackageComment, "not pinned by digest") {
		t.Errorf("tag-only image package = %+v", tagOnly)
	}
	if got := tagOnly.PackageExternalReferences[0].Locator; got != "pkg:oci/ovms?repository_url=registry.example.com%3A5000%2Fmodels%2Fovms&tag=2025.1" {
		t.Errorf("tag-only purl = %s", got)
	}
	if got := pkgs["RPM-microshift"].PackageVersion; got != "4.18.7" {
		t.Errorf("exact RPM versionInfo = %q", got)
	}
	if got := pkgs["RPM-orphan"].PackageVersion; got != "1.*" {
		t.Errorf("RPM constraint versionInfo = %q, want 1.*", got)
	}
	for _, r := range []string{
		"DOCUMENT DESCRIBES Composition",
		"Composition CONTAINS Component-core",
		"Composition CONTAINS Component-ai-model",
		"Component-core DEPENDS_ON RPM-microshift",
		"Component-core DEPENDS_ON RPM-libstdc",
		"Component-ai-model DEPENDS_ON RPM-libstdc",
		"Component-ai-model DEPENDS_ON Image-serving-0123456789ab",
		"Component-core DEPENDS_ON Image-serving-111111111111",
		"Component-ai-model DEPENDS_ON Chart-podinfo-6.9.2",
		// What no selected component claims is the composition's.
		"Composition DEPENDS_ON RPM-orphan",
		"Composition DEPENDS_ON Image-busybox-0123456789ab",
	} {
		if !rels[r] {
			t.Errorf("no relationship %s", r)
		}
	}
	if ch := pkgs["Chart-podinfo-6.9.2"]; ch == nil || ch.PackageVersion != "6.9.2" || ch.PackageFileName != "charts/podinfo-6.9.2.tgz" ||
		len(ch.PackageChecksums) != 1 || ch.PackageChecksums[0].Algorithm != "SHA256" || ch.PackageChecksums[0].Value != strings.Repeat("ab", 32) {
		t.Errorf("chart package = %+v", ch)
	}
	if got := pkgs["Composition"].PackageName; got != "microshift-minimal-custom-aarch64" {
		t.Errorf("composition name = %q", got)
	}
}

// TestEncodeUniqueIDs: names an SPDX ID cannot tell apart get distinct IDs.
func TestEncodeUniqueIDs(t *testing.T) {
	p := oddPlan()
	p.Packages = append(p.Packages, plan.Package{Name: "libstdc__"}, plan.Package{Name: "libstdc"})
	data, err := sbom.Encode(p, nil, sbom.Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := testutil.CheckSPDX(t, "sbom.spdx.json", data)
	seen := map[spdx.ElementID]bool{}
	for _, pkg := range doc.Packages {
		if seen[pkg.PackageSPDXIdentifier] {
			t.Errorf("SPDX ID %s used twice", pkg.PackageSPDXIdentifier)
		}
		seen[pkg.PackageSPDXIdentifier] = true
	}
}

func TestEncodeBadImage(t *testing.T) {
	p := oddPlan()
	p.Images = append(p.Images, plan.Image{Ref: "UPPER CASE/not a ref"})
	if _, err := sbom.Encode(p, nil, sbom.Options{}); err == nil || !strings.Contains(err.Error(), "UPPER CASE/not a ref") {
		t.Fatalf("Encode(bad image ref) = %v, want an error naming it", err)
	}
}

func TestParseSourceDateEpoch(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{in: "0", want: "1970-01-01T00:00:00Z"},
		{in: "1700000000", want: "2023-11-14T22:13:20Z"},
		{in: " 1700000000\n", want: "2023-11-14T22:13:20Z"},
		{in: "-1", wantErr: "not a number of seconds"},
		{in: "1.5", wantErr: "not a number of seconds"},
		{in: "yesterday", wantErr: "not a number of seconds"},
		{in: "99999999999999", wantErr: "after the year 9999"},
		{in: "99999999999999999999", wantErr: "not a number of seconds"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := sbom.ParseSourceDateEpoch(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
					t.Fatalf("ParseSourceDateEpoch(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got.Format(time.RFC3339) != tc.want {
				t.Fatalf("ParseSourceDateEpoch(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
			}
		})
	}
}

// FuzzEncode: whatever names, versions and references a plan holds, Encode
// either refuses (a reference that does not parse) or writes a document the
// SPDX schema and spdx/tools-golang accept.
func FuzzEncode(f *testing.F) {
	f.Add("core", "microshift", "4.18.*", "quay.io/org/img@"+digest, "key", "full")
	f.Add("a_b", "libstdc++", "", "registry.example.com:5000/m/ovms:2025.1", "", "")
	f.Add("x", "y", "1.0", "busybox", "k k", "p/q")
	f.Fuzz(func(t *testing.T, comp, rpm, version, ref, key, profile string) {
		p := oddPlan()
		p.Profile = profile
		p.Components = append(p.Components, plan.Component{Name: comp, Description: comp})
		p.Packages = append(p.Packages, plan.Package{Name: rpm, Version: version, Components: []string{comp}})
		p.Images = append(p.Images, plan.Image{Ref: ref, Uses: []plan.ImageUse{{Component: comp, Key: key}}})
		data, err := sbom.Encode(p, []byte(ref), sbom.Options{ToolVersion: version})
		if err != nil {
			if !strings.Contains(err.Error(), "describing image") {
				t.Fatalf("Encode() = %v: only image references may be refused", err)
			}
			return
		}
		testutil.CheckSPDX(t, "sbom.spdx.json", data)
	})
}

func keys(m map[string]*spdx.Package) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
