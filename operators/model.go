package operators

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/text"
)

// Schemas of file-based catalog objects.
const (
	SchemaPackage      = "olm.package"
	SchemaChannel      = "olm.channel"
	SchemaBundle       = "olm.bundle"
	SchemaDeprecations = "olm.deprecations"
)

// Property types of a bundle.
const (
	PropertyPackage         = "olm.package"
	PropertyGVK             = "olm.gvk"
	PropertyPackageRequired = "olm.package.required"
	PropertyGVKRequired     = "olm.gvk.required"
	PropertyBundleObject    = "olm.bundle.object"
	PropertyCSVMetadata     = "olm.csv.metadata"
)

// Model is what resolution needs of a catalog: every package with its
// channels and bundles, without the bundles' objects (read again for the
// chosen bundles only, so that memory stays bounded by what is chosen).
type Model struct {
	Packages map[string]*Package
	// Objects counts the catalog's objects, by schema.
	Objects map[string]int
	// files are the packages of each file's objects, so that a second
	// pass reads only the files of the packages it wants.
	files map[string]map[string]bool
}

// hasAny reports whether the file at path holds objects of any of pkgs.
func (m *Model) hasAny(path string, pkgs map[string]bool) bool {
	for p := range m.files[path] {
		if pkgs[p] {
			return true
		}
	}
	return false
}

// Package is an olm.package and what belongs to it.
type Package struct {
	Name           string
	DefaultChannel string
	Channels       map[string]*Channel
	Bundles        map[string]*Bundle
	// Where is FILE:LINE of its olm.package object ("" when the catalog
	// has none: an error).
	Where string
	// firstSeen is where an object of the package was seen first.
	firstSeen string
}

// Channel is an olm.channel.
type Channel struct {
	Package string
	Name    string
	Entries []Entry
	Where   string
}

// Entry is a bundle of a channel and its upgrade edges.
type Entry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
}

// Bundle is an olm.bundle, as resolution needs it.
type Bundle struct {
	Package string
	Name    string
	// Image is the bundle image; "" for a bundle whose manifests are in
	// the catalog alone (olm.bundle.object).
	Image            string
	Version          *semver.Version
	Provides         []GVK
	RequiresPackages []PackageRequirement
	RequiresGVKs     []GVK
	RelatedImages    []RelatedImage
	Where            string
}

// GVK is an API group, version and kind.
type GVK struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

func (g GVK) String() string {
	if g.Group == "" {
		return g.Version + " " + g.Kind
	}
	return g.Group + "/" + g.Version + " " + g.Kind
}

// PackageRequirement is an olm.package.required property.
type PackageRequirement struct {
	Package string `json:"packageName"`
	Range   string `json:"versionRange"`
}

// RelatedImage is an image a bundle's operator runs or deploys.
type RelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// Property is a bundle property: its type and value as JSON.
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

type channelJSON struct {
	Package string  `json:"package"`
	Name    string  `json:"name"`
	Entries []Entry `json:"entries"`
}

type packageJSON struct {
	Name           string `json:"name"`
	DefaultChannel string `json:"defaultChannel"`
}

type bundleJSON struct {
	Package       string         `json:"package"`
	Name          string         `json:"name"`
	Image         string         `json:"image"`
	Properties    []Property     `json:"properties"`
	RelatedImages []RelatedImage `json:"relatedImages"`
}

// objectJSON is every field Index reads of an olm.package, olm.channel or
// olm.bundle: each object is decoded once, whatever its schema.
type objectJSON struct {
	head
	DefaultChannel string         `json:"defaultChannel"`
	Entries        []Entry        `json:"entries"`
	Image          string         `json:"image"`
	Properties     []Property     `json:"properties"`
	RelatedImages  []RelatedImage `json:"relatedImages"`
}

type packageProperty struct {
	Package string `json:"packageName"`
	Version string `json:"version"`
}

// Index reads every object of files into a Model: one pass, one object in
// memory at a time. Objects of other schemas (olm.deprecations, schemas
// of other tools) are counted and left for Extract. A package, channel or
// bundle defined twice, a channel or bundle of a package with no
// olm.package, and a bundle without a valid olm.package property are
// refused, naming where.
func Index(ctx context.Context, files Files, lim Limits) (*Model, error) {
	m := &Model{Packages: map[string]*Package{}, Objects: map[string]int{}, files: map[string]map[string]bool{}}
	w := walk{value: func() decoded { return &objectJSON{} }}
	err := walkObjects(ctx, files, lim, w, func(o Object) error {
		m.Objects[o.Schema]++
		pkg := o.Package
		if o.Schema == SchemaPackage {
			pkg = o.Name
		}
		if m.files[o.Path] == nil {
			m.files[o.Path] = map[string]bool{}
		}
		m.files[o.Path][pkg] = true
		oj := o.Value.(*objectJSON)
		switch o.Schema {
		case SchemaPackage:
			return m.addPackage(o, oj)
		case SchemaChannel:
			return m.addChannel(o, oj)
		case SchemaBundle:
			return m.addBundle(o, oj)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, n := range slices.Sorted(maps.Keys(m.Packages)) {
		if p := m.Packages[n]; p.Where == "" {
			return nil, fmt.Errorf("%s: package %s has channels or bundles but no olm.package object", p.firstSeen, text.QuoteExcerpt(n))
		}
	}
	return m, nil
}

// pkg returns the package named n, created on first mention.
func (m *Model) pkg(n, where string) *Package {
	p := m.Packages[n]
	if p == nil {
		p = &Package{Name: n, Channels: map[string]*Channel{}, Bundles: map[string]*Bundle{}, firstSeen: where}
		m.Packages[n] = p
	}
	return p
}

func decodeObject(where, what string, raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %s: %s", where, what, text.OneLine(err.Error()))
	}
	return nil
}

func (m *Model) addPackage(o Object, pj *objectJSON) error {
	if pj.Name == "" {
		return fmt.Errorf("%s: an olm.package without a name", o.Where)
	}
	p := m.pkg(pj.Name, o.Where)
	if p.Where != "" {
		return fmt.Errorf("%s: package %s is defined twice (first at %s)", o.Where, text.QuoteExcerpt(pj.Name), p.Where)
	}
	p.Where, p.DefaultChannel = o.Where, pj.DefaultChannel
	return nil
}

func (m *Model) addChannel(o Object, cj *objectJSON) error {
	if cj.Package == "" || cj.Name == "" {
		return fmt.Errorf("%s: an olm.channel without a package or a name", o.Where)
	}
	p := m.pkg(cj.Package, o.Where)
	if c := p.Channels[cj.Name]; c != nil {
		return fmt.Errorf("%s: package %s channel %s is defined twice (first at %s)", o.Where, text.QuoteExcerpt(cj.Package), text.QuoteExcerpt(cj.Name), c.Where)
	}
	seen := map[string]bool{}
	for _, e := range cj.Entries {
		if e.Name == "" {
			return fmt.Errorf("%s: package %s channel %s has an entry without a name", o.Where, text.QuoteExcerpt(cj.Package), text.QuoteExcerpt(cj.Name))
		}
		if seen[e.Name] {
			return fmt.Errorf("%s: package %s channel %s lists bundle %s twice", o.Where, text.QuoteExcerpt(cj.Package), text.QuoteExcerpt(cj.Name), text.QuoteExcerpt(e.Name))
		}
		seen[e.Name] = true
	}
	p.Channels[cj.Name] = &Channel{Package: cj.Package, Name: cj.Name, Entries: cj.Entries, Where: o.Where}
	return nil
}

func (m *Model) addBundle(o Object, bj *objectJSON) error {
	if bj.Package == "" || bj.Name == "" {
		return fmt.Errorf("%s: an olm.bundle without a package or a name", o.Where)
	}
	p := m.pkg(bj.Package, o.Where)
	if b := p.Bundles[bj.Name]; b != nil {
		return fmt.Errorf("%s: package %s bundle %s is defined twice (first at %s)", o.Where, text.QuoteExcerpt(bj.Package), text.QuoteExcerpt(bj.Name), b.Where)
	}
	b := &Bundle{Package: bj.Package, Name: bj.Name, Image: bj.Image, RelatedImages: bj.RelatedImages, Where: o.Where}
	what := fmt.Sprintf("bundle %s", text.QuoteExcerpt(bj.Name))
	var pkgProps int
	for _, prop := range bj.Properties {
		switch prop.Type {
		case PropertyPackage:
			pkgProps++
			var pp packageProperty
			if err := decodeObject(o.Where, what+" property "+prop.Type, prop.Value, &pp); err != nil {
				return err
			}
			if pp.Package != bj.Package {
				return fmt.Errorf("%s: %s is of package %s, and its olm.package property names %s", o.Where, what, text.QuoteExcerpt(bj.Package), text.QuoteExcerpt(pp.Package))
			}
			v, err := semver.StrictNewVersion(pp.Version)
			if err != nil {
				return fmt.Errorf("%s: %s: version %s is not a semantic version: %v", o.Where, what, text.QuoteExcerpt(pp.Version), err)
			}
			b.Version = v
		case PropertyGVK:
			var g GVK
			if err := decodeObject(o.Where, what+" property "+prop.Type, prop.Value, &g); err != nil {
				return err
			}
			b.Provides = append(b.Provides, g)
		case PropertyGVKRequired:
			var g GVK
			if err := decodeObject(o.Where, what+" property "+prop.Type, prop.Value, &g); err != nil {
				return err
			}
			b.RequiresGVKs = append(b.RequiresGVKs, g)
		case PropertyPackageRequired:
			var r PackageRequirement
			if err := decodeObject(o.Where, what+" property "+prop.Type, prop.Value, &r); err != nil {
				return err
			}
			if r.Package == "" {
				return fmt.Errorf("%s: %s: an olm.package.required without a packageName", o.Where, what)
			}
			if _, err := ParseRange(r.Range); err != nil {
				return fmt.Errorf("%s: %s: olm.package.required %s: %w", o.Where, what, text.QuoteExcerpt(r.Package), err)
			}
			b.RequiresPackages = append(b.RequiresPackages, r)
		}
	}
	if pkgProps != 1 {
		return fmt.Errorf("%s: %s has %d olm.package properties, want one (its package and version)", o.Where, what, pkgProps)
	}
	for i, ri := range b.RelatedImages {
		if strings.TrimSpace(ri.Image) == "" {
			return fmt.Errorf("%s: %s: relatedImages[%d] has no image", o.Where, what, i)
		}
	}
	p.Bundles[bj.Name] = b
	return nil
}
