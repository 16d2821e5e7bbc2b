package sbom

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/uuid"

	"github.com/microshift-compose/microshift-compose/plan"
)

// CycloneDXSpec is the CycloneDX version EncodeCycloneDX writes.
const CycloneDXSpec = cdx.SpecVersion1_6

// EncodeCycloneDX renders the CycloneDX 1.6 JSON document of a plan, the
// same content as Encode's SPDX document: the composition as the BOM's
// metadata.component (an operating system), each selected component, each
// RPM (a library, with its purl), each container image (a container, its
// digest as version and SHA-256 hash, a pkg:oci purl), each Helm chart (the
// archive file kept in charts/, with its SHA-256), and the dependency
// graph (the composition on its components, each component on what it
// needs). The serial number is a name-based UUID of the lock's SHA-256, so
// the same lock gives the same bytes.
func EncodeCycloneDX(p *plan.Plan, lock []byte, opts Options) ([]byte, error) {
	bom, err := BOM(p, lock, opts)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := cdx.NewBOMEncoder(&b, cdx.BOMFileFormatJSON).SetPretty(true).SetEscapeHTML(false)
	if err := enc.EncodeVersion(bom, CycloneDXSpec); err != nil {
		return nil, fmt.Errorf("encoding the CycloneDX document: %w", err)
	}
	return b.Bytes(), nil
}

// BOM builds the CycloneDX document of a plan (see EncodeCycloneDX).
func BOM(p *plan.Plan, lock []byte, opts Options) (*cdx.BOM, error) {
	created := opts.Created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	sum := sha256.Sum256(lock)
	lockSum := hex.EncodeToString(sum[:])
	compName := compositionName(p)

	bom := cdx.NewBOM()
	bom.SerialNumber = uuid.NewSHA1(uuid.NameSpaceURL, []byte(Namespace+slug(compName)+"-"+lockSum)).URN()
	bom.Version = 1
	tool := cdx.Component{Type: cdx.ComponentTypeApplication, Name: "microshift-compose", Version: opts.ToolVersion}
	root := cdx.Component{
		BOMRef:      "composition",
		Type:        cdx.ComponentTypeOS,
		Name:        compName,
		Version:     p.Release.Base,
		Description: compositionDescription(p),
		Properties: &[]cdx.Property{
			{Name: "microshift-compose:lock:sha256", Value: lockSum},
			{Name: "microshift-compose:composition-id", Value: p.ID},
		},
	}
	bom.Metadata = &cdx.Metadata{
		Timestamp: created.UTC().Format(time.RFC3339),
		Tools:     &cdx.ToolsChoice{Components: &[]cdx.Component{tool}},
		Component: &root,
	}

	refs := refSet{}
	var comps []cdx.Component
	compRefs := map[string]string{}
	for _, c := range p.Components {
		ref := refs.add("component", c.Name)
		compRefs[c.Name] = ref
		comp := cdx.Component{BOMRef: ref, Type: cdx.ComponentTypeApplication, Name: c.Name, Description: c.Description}
		if len(c.Reasons) > 0 {
			var props []cdx.Property
			for _, r := range c.Reasons {
				props = append(props, cdx.Property{Name: "microshift-compose:selected", Value: r.String()})
			}
			comp.Properties = &props
		}
		comps = append(comps, comp)
	}
	depends := map[string][]string{}
	dependsOn := func(components []string, dep string) {
		n := 0
		for _, c := range components {
			if ref, ok := compRefs[c]; ok && !slices.Contains(depends[ref], dep) {
				depends[ref] = append(depends[ref], dep)
				n++
			}
		}
		if n == 0 {
			depends[root.BOMRef] = append(depends[root.BOMRef], dep)
		}
	}

	for _, pkg := range p.Packages {
		info := describeRPM(pkg, p)
		ref := refs.add("rpm", pkg.Name)
		comp := cdx.Component{
			BOMRef:      ref,
			Type:        cdx.ComponentTypeLibrary,
			Name:        pkg.Name,
			Version:     info.version,
			PackageURL:  info.purl,
			Description: info.comment,
		}
		if info.sha256 != "" {
			comp.Hashes = &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: info.sha256}}
		}
		comps = append(comps, comp)
		dependsOn(pkg.Components, ref)
	}

	imageRefs := map[string]string{}
	for _, im := range p.Images {
		info, err := describeImage(im)
		if err != nil {
			return nil, err
		}
		ref := refs.add("image", firstOr(info.keys, info.purlName)+"-"+info.idSuffix[:min(12, len(info.idSuffix))])
		imageRefs[im.Ref] = ref
		comp := cdx.Component{
			BOMRef:      ref,
			Type:        cdx.ComponentTypeContainer,
			Name:        info.name,
			Version:     info.version,
			PackageURL:  info.purl,
			Description: info.source + "; " + info.comment,
		}
		if info.hex != "" {
			comp.Hashes = &[]cdx.Hash{{Algorithm: cdxHash(info.algo), Value: info.hex}}
		}
		comps = append(comps, comp)
		var users []string
		for _, u := range im.Uses {
			users = append(users, u.Component)
		}
		dependsOn(users, ref)
	}

	var bundleDeps []cdx.Dependency
	if ops := p.Operators; ops != nil {
		for _, o := range ops.Packages {
			ref := refs.add("operator", o.Name)
			comps = append(comps, cdx.Component{
				BOMRef: ref, Type: cdx.ComponentTypeApplication, Name: o.Bundle, Version: o.Version,
				Description: operatorComment(o, ops),
			})
			dependsOn([]string{plan.OperatorImagesComponent}, ref)
			d := []string{}
			for _, img := range operatorImages(o) {
				if r, ok := imageRefs[img]; ok {
					d = append(d, r)
				}
			}
			bundleDeps = append(bundleDeps, cdx.Dependency{Ref: ref, Dependencies: &d})
		}
	}

	for _, ch := range p.Charts {
		ref := refs.add("chart", ch.Name+"-"+ch.Version)
		comp := cdx.Component{
			BOMRef:      ref,
			Type:        cdx.ComponentTypeFile,
			Name:        ch.File,
			Version:     ch.Version,
			Description: "Helm chart " + ch.Name + " " + ch.Version + ", rendered offline into manifests.d by " + ch.Component,
		}
		if ch.SHA256 != "" {
			comp.Hashes = &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: ch.SHA256}}
		}
		comps = append(comps, comp)
		dependsOn([]string{ch.Component}, ref)
	}
	bom.Components = &comps

	// The composition depends on its components and on what none of them
	// claims; each component on what it needs.
	rootDeps := slices.Clone(compRefNames(p, compRefs))
	rootDeps = append(rootDeps, depends[root.BOMRef]...)
	deps := []cdx.Dependency{{Ref: root.BOMRef, Dependencies: &rootDeps}}
	for _, c := range p.Components {
		ref := compRefs[c.Name]
		d := slices.Clone(depends[ref])
		if d == nil {
			d = []string{}
		}
		deps = append(deps, cdx.Dependency{Ref: ref, Dependencies: &d})
	}
	deps = append(deps, bundleDeps...)
	bom.Dependencies = &deps
	return bom, nil
}

// compRefNames are the components' refs in apply order.
func compRefNames(p *plan.Plan, refs map[string]string) []string {
	out := make([]string, 0, len(p.Components))
	for _, c := range p.Components {
		out = append(out, refs[c.Name])
	}
	return out
}

// cdxHash is CycloneDX's name of a digest algorithm ("sha256" ->
// "SHA-256").
func cdxHash(algo string) cdx.HashAlgorithm {
	switch strings.ToLower(algo) {
	case "sha256":
		return cdx.HashAlgoSHA256
	case "sha384":
		return cdx.HashAlgoSHA384
	case "sha512":
		return cdx.HashAlgoSHA512
	}
	return cdx.HashAlgorithm(strings.ToUpper(algo))
}

// refSet hands out unique bom-refs "<kind>:<name>".
type refSet map[string]bool

func (s refSet) add(kind, name string) string {
	ref := kind + ":" + slug(name)
	if s[ref] {
		sum := sha256.Sum256([]byte(kind + "/" + name))
		base := ref + "-" + hex.EncodeToString(sum[:4])
		ref = base
		for i := 2; s[ref]; i++ {
			ref = fmt.Sprintf("%s-%d", base, i)
		}
	}
	s[ref] = true
	return ref
}
