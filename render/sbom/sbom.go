package sbom

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/package-url/packageurl-go"
	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx"
	"github.com/spdx/tools-golang/spdx/v2/common"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/plan"
)

// Namespace is the prefix of every document's documentNamespace; the rest
// is the document's name and the SHA-256 of the lock it describes, so that
// the same lock always gives the same namespace and another lock another.
const Namespace = "https://github.com/microshift-compose/microshift-compose/spdx/"

// SPDX values this package writes.
const (
	noAssertion = "NOASSERTION"
	// purlType is SPDX 2.3's external reference type for a package URL.
	purlType = "purl"
	// rpmNamespace is the purl namespace of the RPMs: the vendor of the
	// distros MicroShift is built for (RHEL's; CentOS's for a plan for
	// CentOS Stream, rpmNamespaces).
	rpmNamespace = "redhat"
)

// rpmNamespaces are the purl namespaces of the RPMs of the distros other
// than RHEL a plan may be for, by the distro's ID (the part of its name
// before the first dash): the vendor whose advisories a scanner matches.
var rpmNamespaces = map[string]string{"centos": "centos"}

// namespaceOf is the purl namespace of the plan's RPMs.
func namespaceOf(p *plan.Plan) string {
	id, _, _ := strings.Cut(targetDistro(p), "-")
	if ns, ok := rpmNamespaces[id]; ok {
		return ns
	}
	return rpmNamespace
}

// The primaryPackagePurpose of each kind of package (SPDX 2.3, 7.24): the
// composition is an operating system image, its components and RPMs are
// the applications it installs, the images are containers and the Helm
// charts the archives kept beside the SBOM.
const (
	purposeComposition = "OPERATING_SYSTEM"
	purposeComponent   = "APPLICATION"
	purposeRPM         = "APPLICATION"
	purposeImage       = "CONTAINER"
	purposeChart       = "ARCHIVE"
	purposeOperator    = "APPLICATION"
)

// Options tune Encode.
type Options struct {
	// Created is the creation time the document records. The zero value
	// records the Unix epoch: build records no clock, so the same inputs
	// give the same bytes. The CLI sets it from SOURCE_DATE_EPOCH.
	Created time.Time
	// ToolVersion is microshift-compose's version, named in the creator
	// ("Tool: microshift-compose-<version>"); "" names the tool alone.
	ToolVersion string
	// Formats are the documents build writes; nil writes SPDX alone.
	Formats []Format
}

// Format is an SBOM format build writes.
type Format string

// The formats, as --sbom-format names them.
const (
	FormatSPDX      Format = "spdx"
	FormatCycloneDX Format = "cyclonedx"
)

// Formats lists every format, in the order build writes them.
var Formats = []Format{FormatSPDX, FormatCycloneDX}

// Wanted are the formats o asks for, in Formats order: SPDX alone when it
// names none.
func (o Options) Wanted() []Format {
	if len(o.Formats) == 0 {
		return []Format{FormatSPDX}
	}
	var out []Format
	for _, f := range Formats {
		if slices.Contains(o.Formats, f) {
			out = append(out, f)
		}
	}
	return out
}

// EncodeFormat renders the document of format f (Encode, EncodeCycloneDX).
func EncodeFormat(f Format, p *plan.Plan, lock []byte, opts Options) ([]byte, error) {
	switch f {
	case FormatSPDX:
		return Encode(p, lock, opts)
	case FormatCycloneDX:
		return EncodeCycloneDX(p, lock, opts)
	}
	return nil, fmt.Errorf("unknown SBOM format %q (want %s or %s)", f, FormatSPDX, FormatCycloneDX)
}

// Encode renders the SPDX 2.3 JSON document of a plan: indented, keys in
// the model's order, lists in plan order, trailing newline. lock is the
// plan's compose.lock.json, whose SHA-256 makes the documentNamespace.
func Encode(p *plan.Plan, lock []byte, opts Options) ([]byte, error) {
	doc, err := Document(p, lock, opts)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := spdxjson.Write(doc, &b, spdxjson.Indent("  "), spdxjson.EscapeHTML(false)); err != nil {
		return nil, fmt.Errorf("encoding the SPDX document: %w", err)
	}
	return b.Bytes(), nil
}

// Document builds the SPDX 2.3 document of a plan (see Encode).
func Document(p *plan.Plan, lock []byte, opts Options) (*spdx.Document, error) {
	created := opts.Created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	sum := sha256.Sum256(lock)
	lockSum := hex.EncodeToString(sum[:])
	compName := compositionName(p)
	tool := "microshift-compose"
	if opts.ToolVersion != "" {
		tool += "-" + opts.ToolVersion
	}
	doc := &spdx.Document{
		SPDXVersion:       spdx.Version,
		DataLicense:       spdx.DataLicense,
		SPDXIdentifier:    "DOCUMENT",
		DocumentName:      "microshift-compose " + compName,
		DocumentNamespace: Namespace + slug(compName) + "-" + lockSum,
		DocumentComment: fmt.Sprintf("The inputs of a MicroShift OS image as planned by microshift-compose build (compose.lock.json sha256 %s). "+
			"RPM versions are the constraints requested of the package manager; the image build picks the builds. "+
			"created is SOURCE_DATE_EPOCH when it was set, else the Unix epoch: the build records no clock.", lockSum),
		CreationInfo: &spdx.CreationInfo{
			Creators: []common.Creator{{CreatorType: "Tool", Creator: tool}},
			Created:  created.UTC().Format(time.RFC3339),
		},
	}

	ids := idSet{}
	root := ids.add("Composition", "")
	doc.Packages = append(doc.Packages, &spdx.Package{
		PackageName:             compName,
		PackageSPDXIdentifier:   root,
		PackageVersion:          p.Release.Base,
		PackageDownloadLocation: noAssertion,
		PackageDescription:      compositionDescription(p),
		PrimaryPackagePurpose:   purposeComposition,
	})
	rel := func(a common.ElementID, kind string, b common.ElementID) {
		doc.Relationships = append(doc.Relationships, &spdx.Relationship{
			RefA:         common.MakeDocElementID("", string(a)),
			RefB:         common.MakeDocElementID("", string(b)),
			Relationship: kind,
		})
	}
	rel("DOCUMENT", common.TypeRelationshipDescribe, root)

	// Components, in apply order.
	compIDs := map[string]common.ElementID{}
	for _, c := range p.Components {
		id := ids.add("Component", c.Name)
		compIDs[c.Name] = id
		reasons := make([]string, len(c.Reasons))
		for i, r := range c.Reasons {
			reasons[i] = r.String()
		}
		pkg := &spdx.Package{
			PackageName:             c.Name,
			PackageSPDXIdentifier:   id,
			PackageDownloadLocation: noAssertion,
			PackageDescription:      c.Description,
			PrimaryPackagePurpose:   purposeComponent,
		}
		if len(reasons) > 0 {
			pkg.PackageComment = "selected: " + strings.Join(reasons, "; ")
		}
		doc.Packages = append(doc.Packages, pkg)
		rel(root, common.TypeRelationshipContains, id)
	}
	// dependsOn relates what a component needs; what no selected
	// component claims is the composition's own dependency.
	depends := map[common.ElementID][]common.ElementID{}
	dependsOn := func(components []string, dep common.ElementID) {
		n := 0
		for _, c := range components {
			if id, ok := compIDs[c]; ok && !slices.Contains(depends[id], dep) {
				depends[id] = append(depends[id], dep)
				n++
			}
		}
		if n == 0 {
			depends[root] = append(depends[root], dep)
		}
	}

	// RPMs, with the version constraint the blueprint requests, or the
	// build it pins to when the plan records it.
	for _, pkg := range p.Packages {
		id := ids.add("RPM", pkg.Name)
		info := describeRPM(pkg, p)
		sp := &spdx.Package{
			PackageName:             pkg.Name,
			PackageSPDXIdentifier:   id,
			PackageVersion:          info.version,
			PackageDownloadLocation: noAssertion,
			PackageExternalReferences: []*spdx.PackageExternalReference{{
				Category: common.CategoryPackageManager,
				RefType:  purlType,
				Locator:  info.purl,
			}},
			PackageComment:        info.comment,
			PrimaryPackagePurpose: purposeRPM,
		}
		if info.nevra != "" {
			sp.PackageFileName = info.nevra + ".rpm"
		}
		if info.sha256 != "" {
			sp.PackageChecksums = []common.Checksum{{Algorithm: common.SHA256, Value: info.sha256}}
		}
		doc.Packages = append(doc.Packages, sp)
		dependsOn(pkg.Components, id)
	}

	// Container images, with their digest.
	imageIDs := map[string]common.ElementID{}
	for _, im := range p.Images {
		sp, err := imagePackage(im, &ids)
		if err != nil {
			return nil, err
		}
		imageIDs[im.Ref] = sp.PackageSPDXIdentifier
		doc.Packages = append(doc.Packages, sp)
		var comps []string
		for _, u := range im.Uses {
			comps = append(comps, u.Component)
		}
		dependsOn(comps, sp.PackageSPDXIdentifier)
	}

	// Operator bundles, which OLM installs: each depends on its bundle
	// image and related images.
	if ops := p.Operators; ops != nil {
		for _, o := range ops.Packages {
			id := ids.add("Operator", o.Name)
			// Named as OLM names it: its CSV's name (the package's
			// name may be a component's or an RPM's too).
			doc.Packages = append(doc.Packages, &spdx.Package{
				PackageName:             o.Bundle,
				PackageSPDXIdentifier:   id,
				PackageVersion:          o.Version,
				PackageDownloadLocation: noAssertion,
				PackageComment:          operatorComment(o, ops),
				PrimaryPackagePurpose:   purposeOperator,
			})
			dependsOn([]string{plan.OperatorImagesComponent}, id)
			for _, ref := range operatorImages(o) {
				if img, ok := imageIDs[ref]; ok {
					rel(id, common.TypeRelationshipDependsOn, img)
				}
			}
		}
	}

	// Helm charts, kept in the output as archives: their sha256 is a
	// checksum of the file beside the SBOM.
	for _, ch := range p.Charts {
		id := ids.add("Chart", ch.Name+"-"+ch.Version)
		sp := &spdx.Package{
			PackageName:             ch.Name,
			PackageSPDXIdentifier:   id,
			PackageVersion:          ch.Version,
			PackageFileName:         ch.File,
			PackageDownloadLocation: noAssertion,
			PackageComment:          "Helm chart rendered offline into manifests.d by " + ch.Component,
			PrimaryPackagePurpose:   purposeChart,
		}
		if ch.SHA256 != "" {
			sp.PackageChecksums = []common.Checksum{{Algorithm: common.SHA256, Value: ch.SHA256}}
		}
		doc.Packages = append(doc.Packages, sp)
		dependsOn([]string{ch.Component}, id)
	}

	for _, id := range append([]common.ElementID{root}, mapValues(compIDs, p)...) {
		for _, dep := range depends[id] {
			rel(id, common.TypeRelationshipDependsOn, dep)
		}
	}
	return doc, nil
}

// mapValues lists the components' IDs in apply order.
func mapValues(ids map[string]common.ElementID, p *plan.Plan) []common.ElementID {
	out := make([]common.ElementID, 0, len(p.Components))
	for _, c := range p.Components {
		out = append(out, ids[c.Name])
	}
	return out
}

// operatorComment says what an operator bundle is and where it comes
// from, in both SBOM formats.
func operatorComment(o plan.OperatorPackage, ops *plan.Operators) string {
	s := fmt.Sprintf("operator bundle %s of package %s, channel %s, from the catalog %s (filtered into %s); installed by OLM in namespace %s", o.Bundle, o.Name, o.Channel, ops.Catalog.Ref, ops.Filtered.Ref, o.Namespace)
	if !o.Subscribed() {
		s += fmt.Sprintf(", required by %s (%s)", o.RequiredBy, o.Requirement)
	}
	if o.Image == "" {
		s += "; its manifests are in the catalog (no bundle image)"
	}
	return s
}

// operatorImages are an operator bundle's bundle image and related images.
func operatorImages(o plan.OperatorPackage) []string {
	var out []string
	if o.Image != "" {
		out = append(out, o.Image)
	}
	for _, ri := range o.RelatedImages {
		if !slices.Contains(out, ri.Image) {
			out = append(out, ri.Image)
		}
	}
	return out
}

// compositionName names the composition: "microshift-<profile>-<arch>"
// with "-custom" for a selection changed by --with or --without.
func compositionName(p *plan.Plan) string {
	profile := p.Profile
	if profile == "" {
		profile = "custom"
	} else if len(p.With) > 0 || len(p.Without) > 0 {
		profile += "-custom"
	}
	return fmt.Sprintf("microshift-%s-%s", profile, p.Arch)
}

func compositionDescription(p *plan.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "MicroShift %s (%s) for %s on %s", p.Release.Base, p.Release.Stream, p.Arch, targetDistro(p))
	if p.Profile != "" {
		fmt.Fprintf(&b, ", profile %s", p.Profile)
	}
	if len(p.With) > 0 {
		fmt.Fprintf(&b, ", with %s", strings.Join(p.With, ", "))
	}
	if len(p.Without) > 0 {
		fmt.Fprintf(&b, ", without %s", strings.Join(p.Without, ", "))
	}
	fmt.Fprintf(&b, ": components %s", strings.Join(p.ComponentNames(), ", "))
	return b.String()
}

func targetDistro(p *plan.Plan) string {
	if p.Target.Distro != "" {
		return p.Target.Distro
	}
	return p.Release.Distro
}

// exactVersion reports whether an RPM version constraint names one
// version (rather than a glob, or any).
func exactVersion(v string) bool {
	return v != "" && !strings.ContainsAny(v, "*?[")
}

func rpmComment(v string) string {
	switch {
	case v == "":
		return "requested in any version"
	case exactVersion(v):
		return "requested at version " + v
	default:
		return "requested with the version constraint " + v
	}
}

// imageInfo is what both SBOM formats say of one container image.
type imageInfo struct {
	// name is its repository and the release-file keys that name it
	// ("quay.io/org/repo (key)": the images of an OpenShift release share
	// one repository, the key tells them apart).
	name string
	keys []string
	// version is the digest, or the tag of a tag-only reference.
	version string
	// algo and hex are the digest's, "" for a tag-only reference.
	algo, hex string
	purl      string
	// source and comment say where it is pulled from and what names it.
	source, comment string
	// idSuffix tells images of one key apart in element IDs.
	idSuffix string
	purlName string
}

// describeImage describes one image: a pkg:oci purl with its repository
// (the purl type the purl specification and syft give OCI images), the
// digest as version and checksum.
func describeImage(im plan.Image) (imageInfo, error) {
	ref, err := imageref.ParseReference(im.Ref, name.WeakValidation)
	if err != nil {
		return imageInfo{}, fmt.Errorf("describing image %s: %w", im.Ref, err)
	}
	repo := ref.Context()
	var info imageInfo
	var uses []string
	for _, u := range im.Uses {
		if !slices.Contains(info.keys, u.Key) {
			info.keys = append(info.keys, u.Key)
		}
		uses = append(uses, fmt.Sprintf("%s %s (%s)", u.File, u.Key, u.Component))
	}
	info.name = repo.Name()
	if len(info.keys) > 0 {
		info.name += " (" + strings.Join(info.keys, ", ") + ")"
	}
	purlName := repo.RepositoryStr()
	if i := strings.LastIndex(purlName, "/"); i >= 0 {
		purlName = purlName[i+1:]
	}
	info.purlName = strings.ToLower(purlName)
	q := map[string]string{"repository_url": repo.Name()}
	// The purl's version is the digest; a tag-only reference
	// (--allow-unpinned) has none, and its tag is a qualifier.
	var purlVersion string
	switch r := ref.(type) {
	case name.Digest:
		algo, hexSum, ok := strings.Cut(r.DigestStr(), ":")
		if !ok {
			return imageInfo{}, fmt.Errorf("describing image %s: digest %q has no algorithm", im.Ref, r.DigestStr())
		}
		info.version, purlVersion = r.DigestStr(), r.DigestStr()
		info.algo, info.hex = algo, hexSum
		info.idSuffix = hexSum
	case name.Tag:
		q["tag"] = r.TagStr()
		info.version = r.TagStr()
		s := sha256.Sum256([]byte(im.Ref))
		info.idSuffix = hex.EncodeToString(s[:])
		uses = append(uses, "not pinned by digest (--allow-unpinned): the bytes behind the tag are not recorded")
	}
	info.source = "pulled from " + im.Ref
	info.comment = "named by " + strings.Join(uses, "; ")
	info.purl = packageurl.NewPackageURL(packageurl.TypeOCI, "", info.purlName, purlVersion, packageurl.QualifiersFromMap(q), "").ToString()
	return info, nil
}

// imagePackage is the SPDX package of one container image.
func imagePackage(im plan.Image, ids *idSet) (*spdx.Package, error) {
	info, err := describeImage(im)
	if err != nil {
		return nil, err
	}
	sp := &spdx.Package{
		PackageName:             info.name,
		PackageVersion:          info.version,
		PackageDownloadLocation: noAssertion,
		PrimaryPackagePurpose:   purposeImage,
		PackageSourceInfo:       info.source,
		PackageComment:          info.comment,
	}
	if info.hex != "" {
		sp.PackageChecksums = []common.Checksum{{Algorithm: common.ChecksumAlgorithm(strings.ToUpper(info.algo)), Value: info.hex}}
	}
	sp.PackageSPDXIdentifier = ids.add("Image", firstOr(info.keys, info.purlName)+"-"+info.idSuffix[:min(12, len(info.idSuffix))])
	sp.PackageExternalReferences = []*spdx.PackageExternalReference{{
		Category: common.CategoryPackageManager,
		RefType:  purlType,
		Locator:  info.purl,
	}}
	return sp, nil
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

// idSet hands out unique SPDX element IDs ("SPDXRef-" is the writer's).
type idSet map[common.ElementID]bool

var idUnsafe = lazyregexp.New(`[^A-Za-z0-9.-]+`)

// add returns "<kind>-<name>" with the characters an SPDX ID may not hold
// replaced, made unique with a hash of name when another took it.
func (s idSet) add(kind, nm string) common.ElementID {
	id := kind
	if nm != "" {
		id += "-" + slug(nm)
	}
	if s[common.ElementID(id)] {
		sum := sha256.Sum256([]byte(kind + "/" + nm))
		base := id + "-" + hex.EncodeToString(sum[:4])
		id = base
		for i := 2; s[common.ElementID(id)]; i++ {
			id = base + "-" + strconv.Itoa(i)
		}
	}
	s[common.ElementID(id)] = true
	return common.ElementID(id)
}

// slug keeps what an SPDX ID and a URI path may hold: letters, digits,
// '.' and '-'.
func slug(s string) string {
	out := strings.Trim(idUnsafe.ReplaceAllString(s, "-"), "-")
	if out == "" {
		return "x"
	}
	return out
}

// ParseSourceDateEpoch reads SOURCE_DATE_EPOCH (reproducible-builds.org):
// a decimal count of seconds since 1970-01-01 UTC.
func ParseSourceDateEpoch(v string) (time.Time, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds since 1970-01-01", v)
	}
	t := time.Unix(n, 0).UTC()
	if t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q is after the year 9999", v)
	}
	return t, nil
}
