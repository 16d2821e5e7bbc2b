package assemble_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spdx/tools-golang/spdx"
	"github.com/spdx/tools-golang/spdx/v2/common"

	"github.com/microshift-compose/microshift-compose/assemble"
	"github.com/microshift-compose/microshift-compose/assemble/assembletest"
	"github.com/microshift-compose/microshift-compose/compose"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/output"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/render/sbom"
)

// TestSBOM builds every golden selection (release x arch x profile) and has
// its sbom.spdx.json checked by others than our writer, the SPDX 2.3 JSON
// schema and spdx/tools-golang's reader and validation, then checks that
// what they read is the plan: the composition described, every component
// contained, every RPM with its constraint and every image with its digest
// and purl depended on by the components that need them.
func TestSBOM(t *testing.T) {
	cat := assembletest.Catalog(t)
	for _, stream := range goldenStreams {
		rel := assembletest.Release(t, stream)
		for _, arch := range goldenArches {
			for _, profile := range goldenProfiles {
				t.Run(stream+"/"+profile+"-"+string(arch), func(t *testing.T) {
					p, err := assemble.Plan(context.Background(), cat, rel, compose.Request{Profile: profile, Arch: arch, AllowRedBoot: true})
					var cannot *compose.CannotHonourError
					if errors.As(err, &cannot) {
						t.Skipf("the release refuses the selection: %v", err)
					}
					if err != nil {
						t.Fatal(err)
					}
					out, err := assemble.Build(context.Background(), p, assemble.Options{Bootc: p.Target.BootcBase != "", SBOM: sbom.Options{Formats: sbom.Formats}})
					if err != nil {
						t.Fatal(err)
					}
					data := out.File(output.SBOMFile)
					if data == nil {
						t.Fatalf("build wrote no %s", output.SBOMFile)
					}
					doc := testutil.CheckSPDX(t, output.SBOMFile, data.Data)
					checkSBOMMatchesPlan(t, doc, out.Plan, out.File(output.LockFile).Data)
					cdxFile := out.File(output.CycloneDXFile)
					if cdxFile == nil {
						t.Fatalf("build wrote no %s", output.CycloneDXFile)
					}
					checkCycloneDXMatchesPlan(t, testutil.CheckCycloneDX(t, output.CycloneDXFile, cdxFile.Data), out.Plan)
				})
			}
		}
	}
}

func checkSBOMMatchesPlan(t *testing.T, doc *spdx.Document, p *plan.Plan, lock []byte) {
	t.Helper()
	sum := sha256.Sum256(lock)
	if !strings.HasPrefix(doc.DocumentNamespace, sbom.Namespace) || !strings.HasSuffix(doc.DocumentNamespace, "-"+hex.EncodeToString(sum[:])) {
		t.Errorf("documentNamespace %s is not derived from the lock's sha256 %x", doc.DocumentNamespace, sum)
	}
	if doc.CreationInfo == nil || doc.CreationInfo.Created != "1970-01-01T00:00:00Z" {
		t.Errorf("created = %+v, want the Unix epoch without SOURCE_DATE_EPOCH", doc.CreationInfo)
	}
	byID := map[common.ElementID]*spdx.Package{}
	byName := map[string]*spdx.Package{}
	// Every package has a purpose of SPDX 2.3's list, as read back by
	// tools-golang (the JSON schema checked the spelling).
	purposes := []string{"OTHER", "INSTALL", "ARCHIVE", "FIRMWARE", "APPLICATION", "FRAMEWORK", "LIBRARY", "CONTAINER", "SOURCE", "DEVICE", "OPERATING_SYSTEM", "FILE"}
	for _, pkg := range doc.Packages {
		if !slices.Contains(purposes, pkg.PrimaryPackagePurpose) {
			t.Errorf("package %s has primaryPackagePurpose %q", pkg.PackageName, pkg.PrimaryPackagePurpose)
		}
		if byID[pkg.PackageSPDXIdentifier] != nil {
			t.Errorf("SPDX ID %s is used twice", pkg.PackageSPDXIdentifier)
		}
		byID[pkg.PackageSPDXIdentifier] = pkg
		byName[pkg.PackageName] = pkg
	}
	rels := map[string]bool{}
	for _, r := range doc.Relationships {
		a, b := byID[r.RefA.ElementRefID], byID[r.RefB.ElementRefID]
		an, bn := string(r.RefA.ElementRefID), ""
		if a != nil {
			an = a.PackageName
		}
		if b != nil {
			bn = b.PackageName
		}
		rels[an+" "+r.Relationship+" "+bn] = true
	}
	var described *spdx.Package
	for _, r := range doc.Relationships {
		if r.RefA.ElementRefID == "DOCUMENT" && r.Relationship == common.TypeRelationshipDescribe {
			described = byID[r.RefB.ElementRefID]
		}
	}
	if described == nil {
		t.Fatal("the document DESCRIBES no package")
	}
	if described.PackageVersion != p.Release.Base || described.PrimaryPackagePurpose != "OPERATING_SYSTEM" {
		t.Errorf("the composition's version = %q, purpose %q; want the release base %q, OPERATING_SYSTEM", described.PackageVersion, described.PrimaryPackagePurpose, p.Release.Base)
	}
	for _, c := range p.Components {
		if byName[c.Name] == nil || !rels[described.PackageName+" CONTAINS "+c.Name] {
			t.Errorf("component %s: no package the composition CONTAINS", c.Name)
		} else if byName[c.Name].PrimaryPackagePurpose != "APPLICATION" {
			t.Errorf("component %s: purpose %q, want APPLICATION", c.Name, byName[c.Name].PrimaryPackagePurpose)
		}
	}
	for _, pkg := range p.Packages {
		sp := byName[pkg.Name]
		if sp == nil {
			t.Errorf("RPM %s has no package", pkg.Name)
			continue
		}
		if sp.PackageVersion != pkg.Version || sp.PrimaryPackagePurpose != "APPLICATION" {
			t.Errorf("RPM %s: versionInfo %q, purpose %q; want the constraint %q, APPLICATION", pkg.Name, sp.PackageVersion, sp.PrimaryPackagePurpose, pkg.Version)
		}
		if !hasPURL(sp, "pkg:rpm/redhat/"+pkg.Name) {
			t.Errorf("RPM %s: no pkg:rpm purl in %+v", pkg.Name, sp.PackageExternalReferences)
		}
		for _, c := range pkg.Components {
			if !rels[c+" DEPENDS_ON "+pkg.Name] {
				t.Errorf("component %s does not DEPEND_ON RPM %s", c, pkg.Name)
			}
		}
	}
	imgs := map[string]*spdx.Package{}
	for _, sp := range doc.Packages {
		if sp.PrimaryPackagePurpose == "CONTAINER" {
			imgs[sp.PackageSourceInfo] = sp
		}
	}
	if len(imgs) != len(p.Images) {
		t.Errorf("%d image packages, want the plan's %d images", len(imgs), len(p.Images))
	}
	for _, im := range p.Images {
		sp := imgs["pulled from "+im.Ref]
		if sp == nil {
			t.Errorf("image %s has no package", im.Ref)
			continue
		}
		// Named by its repository and the keys that name it.
		ref, err := name.ParseReference(im.Ref, name.WeakValidation)
		if err != nil {
			t.Fatal(err)
		}
		if want := ref.Context().Name() + " (" + im.Uses[0].Key; !strings.HasPrefix(sp.PackageName, want) {
			t.Errorf("image %s: name %q, want it to start %q", im.Ref, sp.PackageName, want)
		}
		d, err := name.NewDigest(im.Ref)
		if err != nil {
			continue // tag-only: no checksum to compare (TestSBOMTagOnly)
		}
		hexSum := strings.TrimPrefix(d.DigestStr(), "sha256:")
		if len(sp.PackageChecksums) != 1 || sp.PackageChecksums[0].Algorithm != common.SHA256 || sp.PackageChecksums[0].Value != hexSum {
			t.Errorf("image %s: checksums %+v, want SHA256 %s", im.Ref, sp.PackageChecksums, hexSum)
		}
		repo := d.Context().RepositoryStr()
		want := "pkg:oci/" + strings.ToLower(repo[strings.LastIndex(repo, "/")+1:]) + "@sha256%3A" + hexSum + "?repository_url="
		if !hasPURL(sp, want) {
			t.Errorf("image %s: no purl starting %s in %+v", im.Ref, want, sp.PackageExternalReferences[0])
		}
		for _, u := range im.Uses {
			if !rels[u.Component+" DEPENDS_ON "+sp.PackageName] {
				t.Errorf("component %s does not DEPEND_ON image %s", u.Component, im.Ref)
			}
		}
	}
}

// checkCycloneDXMatchesPlan checks that the CycloneDX document names the
// plan: the composition, every component, every RPM with its purl and
// every image with its digest as version and SHA-256 hash.
func checkCycloneDXMatchesPlan(t *testing.T, bom *cdx.BOM, p *plan.Plan) {
	t.Helper()
	if bom.Metadata == nil || bom.Metadata.Component == nil || bom.Metadata.Component.Version != p.Release.Base {
		t.Fatalf("metadata.component = %+v, want the composition at %s", bom.Metadata, p.Release.Base)
	}
	byName := map[string]cdx.Component{}
	for _, c := range *bom.Components {
		byName[string(c.Type)+" "+c.Name] = c
	}
	for _, c := range p.Components {
		if _, ok := byName["application "+c.Name]; !ok {
			t.Errorf("component %s is not in the CycloneDX document", c.Name)
		}
	}
	for _, pkg := range p.Packages {
		c, ok := byName["library "+pkg.Name]
		if !ok || !strings.HasPrefix(c.PackageURL, "pkg:rpm/redhat/"+pkg.Name) {
			t.Errorf("RPM %s: %+v", pkg.Name, c)
		}
	}
	images := 0
	for _, c := range *bom.Components {
		if c.Type != cdx.ComponentTypeContainer {
			continue
		}
		images++
		if !strings.HasPrefix(c.PackageURL, "pkg:oci/") {
			t.Errorf("image %s: purl %s", c.Name, c.PackageURL)
		}
		if hex, ok := strings.CutPrefix(c.Version, "sha256:"); ok && (c.Hashes == nil || (*c.Hashes)[0].Value != hex) {
			t.Errorf("image %s: hashes %v, want its digest", c.Name, c.Hashes)
		}
	}
	if images != len(p.Images) {
		t.Errorf("%d container components, want the plan's %d images", images, len(p.Images))
	}
}

func hasPURL(sp *spdx.Package, prefix string) bool {
	for _, r := range sp.PackageExternalReferences {
		if r.Category == common.CategoryPackageManager && r.RefType == "purl" && strings.HasPrefix(r.Locator, prefix) {
			return true
		}
	}
	return false
}

// TestSBOMDeterministic: the same plan gives the same bytes, another plan
// another namespace, and SOURCE_DATE_EPOCH (Options.Created) changes
// created and nothing else.
func TestSBOMDeterministic(t *testing.T) {
	cat := assembletest.Catalog(t)
	rel := assembletest.Release(t, "4.19")
	build := func(profile string, opts sbom.Options) []byte {
		t.Helper()
		p := assembletest.Plan(t, cat, rel, compose.Request{Profile: profile, Arch: "x86_64"})
		out, err := assemble.Build(context.Background(), p, assemble.Options{SBOM: opts})
		if err != nil {
			t.Fatal(err)
		}
		return out.File(output.SBOMFile).Data
	}
	a, b := build("full", sbom.Options{}), build("full", sbom.Options{})
	if !bytes.Equal(a, b) {
		t.Fatal("two builds of one plan wrote different SBOMs")
	}
	namespace := func(data []byte) string {
		return testutil.CheckSPDX(t, output.SBOMFile, data).DocumentNamespace
	}
	if namespace(a) == namespace(build("minimal", sbom.Options{})) {
		t.Error("the full and minimal plans' SBOMs share a documentNamespace")
	}
	stamped := build("full", sbom.Options{Created: time.Unix(1700000000, 0), ToolVersion: "v1.2.3"})
	doc := testutil.CheckSPDX(t, output.SBOMFile, stamped)
	if doc.CreationInfo.Created != "2023-11-14T22:13:20Z" {
		t.Errorf("created = %s, want 2023-11-14T22:13:20Z", doc.CreationInfo.Created)
	}
	if got := doc.CreationInfo.Creators; len(got) != 1 || got[0].Creator != "microshift-compose-v1.2.3" || got[0].CreatorType != "Tool" {
		t.Errorf("creators = %+v, want Tool: microshift-compose-v1.2.3", got)
	}
	if doc.DocumentNamespace != namespace(a) {
		t.Error("the creation time changed the documentNamespace")
	}
}

// TestSBOMChart: a chart component's archive is in the SBOM with the
// sha256 of the file build keeps in charts/, and its component
// DEPENDS_ON it.
func TestSBOMChart(t *testing.T) {
	p := assembletest.Plan(t, assembletest.ManifestsCatalog(t), assembletest.Release(t, "5.0"), compose.Request{Profile: "minimal", Arch: "x86_64", With: []string{"chart-app"}})
	out := assembletest.Build(t, p, assemble.Options{})
	doc := testutil.CheckSPDX(t, output.SBOMFile, assembletest.File(t, out, output.SBOMFile))
	checkSBOMMatchesPlan(t, doc, out.Plan, assembletest.File(t, out, output.LockFile))
	sum := sha256.Sum256(assembletest.File(t, out, "charts/hello-0.3.1.tgz"))
	var chart *spdx.Package
	for _, pkg := range doc.Packages {
		if pkg.PackageName == "hello" {
			chart = pkg
		}
	}
	if chart == nil || chart.PackageVersion != "0.3.1" || chart.PackageFileName != "charts/hello-0.3.1.tgz" ||
		len(chart.PackageChecksums) != 1 || chart.PackageChecksums[0].Value != hex.EncodeToString(sum[:]) {
		t.Fatalf("chart package = %+v, want hello 0.3.1 with the archive's sha256 %x", chart, sum)
	}
	found := false
	for _, r := range doc.Relationships {
		found = found || (r.RefA.ElementRefID == "Component-chart-app" && r.Relationship == "DEPENDS_ON" && r.RefB.ElementRefID == chart.PackageSPDXIdentifier)
	}
	if !found {
		t.Error("chart-app does not DEPEND_ON its chart")
	}
}
