// Package operatorstest builds file-based operator catalogs and catalog
// images for tests: objects as opm render writes them, written as JSON or
// YAML, one file or one per package, into catalog images (an OCI layout,
// or pushed to a test registry) with an opm-like base layer, a configs
// layer and a cache layer, as operator-registry's catalog images are
// built.
package operatorstest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/microshift-compose/microshift-compose/operators"
)

// Catalog is a file-based catalog under construction: its objects in the
// order they were added.
type Catalog struct {
	Objects []map[string]any
}

// Package adds an olm.package.
func (c *Catalog) Package(name, defaultChannel string) *Catalog {
	o := map[string]any{"schema": operators.SchemaPackage, "name": name}
	if defaultChannel != "" {
		o["defaultChannel"] = defaultChannel
	}
	c.Objects = append(c.Objects, o)
	return c
}

// Channel adds an olm.channel.
func (c *Catalog) Channel(pkg, name string, entries ...operators.Entry) *Catalog {
	if entries == nil {
		entries = []operators.Entry{}
	}
	c.Objects = append(c.Objects, map[string]any{"schema": operators.SchemaChannel, "package": pkg, "name": name, "entries": entries})
	return c
}

// Chain is a channel's entries for bundles oldest first, each replacing
// the one before.
func Chain(names ...string) []operators.Entry {
	var out []operators.Entry
	for i, n := range names {
		e := operators.Entry{Name: n}
		if i > 0 {
			e.Replaces = names[i-1]
		}
		out = append(out, e)
	}
	return out
}

// Bundle is an olm.bundle to add.
type Bundle struct {
	Package, Name, Version string
	// Image is the bundle image ("" for a bundle of objects alone).
	Image            string
	Related          []operators.RelatedImage
	Provides         []operators.GVK
	RequiresPackages []operators.PackageRequirement
	RequiresGVKs     []operators.GVK
	// CSV adds the ClusterServiceVersion as an olm.bundle.object;
	// Metadata adds its olm.csv.metadata instead.
	CSV      *CSV
	Metadata *CSV
	// Padding adds an olm.bundle.object of that many bytes (a CRD's
	// worth), for catalogs of a real size.
	Padding int
}

// CSV is what a test bundle's ClusterServiceVersion says.
type CSV struct {
	Deployments        []string
	InstallModes       []string // the supported ones; the others are listed unsupported
	SuggestedNamespace string
	// Images are the deployments' container images.
	Images []string
}

var allModes = []string{operators.InstallOwnNamespace, operators.InstallSingleNamespace, operators.InstallMultiNamespace, operators.InstallAllNamespaces}

func (csv *CSV) modes() []map[string]any {
	var out []map[string]any
	for _, m := range allModes {
		supported := false
		for _, s := range csv.InstallModes {
			supported = supported || s == m
		}
		out = append(out, map[string]any{"type": m, "supported": supported})
	}
	return out
}

func (csv *CSV) annotations() map[string]any {
	a := map[string]any{"capabilities": "Basic Install"}
	if csv.SuggestedNamespace != "" {
		a[operators.SuggestedNamespaceAnnotation] = csv.SuggestedNamespace
	}
	return a
}

// object is the CSV as a Kubernetes object.
func (csv *CSV) object(name, version string) map[string]any {
	var deps []map[string]any
	for i, d := range csv.Deployments {
		img := "quay.io/example/operator@sha256:" + fmt.Sprintf("%064x", i)
		if i < len(csv.Images) {
			img = csv.Images[i]
		}
		deps = append(deps, map[string]any{
			"name": d,
			"spec": map[string]any{
				"selector": map[string]any{"matchLabels": map[string]any{"app": d}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"app": d}},
					"spec":     map[string]any{"containers": []any{map[string]any{"name": "manager", "image": img}}},
				},
			},
		})
	}
	return map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1",
		"kind":       "ClusterServiceVersion",
		"metadata":   map[string]any{"name": name, "annotations": csv.annotations()},
		"spec": map[string]any{
			"version":      version,
			"installModes": csv.modes(),
			"install":      map[string]any{"strategy": "deployment", "spec": map[string]any{"deployments": deps}},
		},
	}
}

// Bundle adds an olm.bundle.
func (c *Catalog) Bundle(b Bundle) *Catalog {
	props := []map[string]any{{"type": operators.PropertyPackage, "value": map[string]any{"packageName": b.Package, "version": b.Version}}}
	for _, g := range b.Provides {
		props = append(props, map[string]any{"type": operators.PropertyGVK, "value": g})
	}
	for _, r := range b.RequiresPackages {
		props = append(props, map[string]any{"type": operators.PropertyPackageRequired, "value": r})
	}
	for _, g := range b.RequiresGVKs {
		props = append(props, map[string]any{"type": operators.PropertyGVKRequired, "value": g})
	}
	if b.Metadata != nil {
		props = append(props, map[string]any{"type": operators.PropertyCSVMetadata, "value": map[string]any{
			"annotations": b.Metadata.annotations(), "installModes": b.Metadata.modes(), "displayName": b.Package,
		}})
	}
	if b.CSV != nil {
		data, _ := json.Marshal(b.CSV.object(b.Name, b.Version))
		props = append(props, map[string]any{"type": operators.PropertyBundleObject, "value": map[string]any{"data": base64.StdEncoding.EncodeToString(data)}})
	}
	if b.Padding > 0 {
		crd := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "padding." + b.Name}, "spec": map[string]any{"description": padding(b.Name, b.Padding)}}
		data, _ := json.Marshal(crd)
		props = append(props, map[string]any{"type": operators.PropertyBundleObject, "value": map[string]any{"data": base64.StdEncoding.EncodeToString(data)}})
	}
	o := map[string]any{"schema": operators.SchemaBundle, "package": b.Package, "name": b.Name, "image": b.Image, "properties": props}
	related := b.Related
	if related == nil {
		related = []operators.RelatedImage{}
	}
	o["relatedImages"] = related
	c.Objects = append(c.Objects, o)
	return c
}

// Raw adds an object as it is (another schema, a malformed one).
func (c *Catalog) Raw(o map[string]any) *Catalog {
	c.Objects = append(c.Objects, o)
	return c
}

// JSON is the catalog as opm render writes it: indented objects, one
// after the other.
func (c *Catalog) JSON() []byte { return encodeJSON(c.Objects) }

func encodeJSON(objs []map[string]any) []byte {
	var b bytes.Buffer
	for _, o := range objs {
		data, err := json.MarshalIndent(o, "", "    ")
		if err != nil {
			panic(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// YAML is the catalog as YAML documents.
func (c *Catalog) YAML() []byte { return encodeYAML(c.Objects) }

func encodeYAML(objs []map[string]any) []byte {
	var b bytes.Buffer
	for _, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			panic(err)
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	return b.Bytes()
}

// PerPackage is the catalog as opm's usual layout: one directory per
// package with catalog.json (catalog.yaml with yamlFiles), objects without
// a package (olm.package's own name counts) in catalog.json at the top.
func (c *Catalog) PerPackage(yamlFiles bool) map[string][]byte {
	byPkg := map[string][]map[string]any{}
	for _, o := range c.Objects {
		pkg, _ := o["package"].(string)
		if o["schema"] == operators.SchemaPackage {
			pkg, _ = o["name"].(string)
		}
		byPkg[pkg] = append(byPkg[pkg], o)
	}
	out := map[string][]byte{}
	var names []string
	for n := range byPkg {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		file := n + "/catalog.json"
		data := encodeJSON(byPkg[n])
		if yamlFiles {
			file, data = n+"/catalog.yaml", encodeYAML(byPkg[n])
		}
		if n == "" {
			file = "catalog.json"
		}
		out[file] = data
	}
	return out
}

// padding is n bytes of text that compresses as a CRD's schema does, not
// as one repeated byte would: hex of a hash chain seeded by seed.
func padding(seed string, n int) string {
	var b bytes.Buffer
	sum := sha256.Sum256([]byte(seed))
	for b.Len() < n {
		b.WriteString(hex.EncodeToString(sum[:]))
		b.WriteString(" description of a field; ")
		sum = sha256.Sum256(sum[:])
	}
	return b.String()[:n]
}
