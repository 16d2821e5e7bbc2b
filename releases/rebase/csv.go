package rebase

import (
	"fmt"
	"strings"

	"github.com/microshift-compose/microshift-compose/releases"
)

// CSV is what an operator bundle's ClusterServiceVersion says about its
// images: spec.relatedImages, the list OLM and disconnected mirroring
// tooling read.
//
//	apiVersion: operators.coreos.com/v1alpha1
//	kind: ClusterServiceVersion
//	metadata: {name: lvms-operator.v4.18.3}
//	spec:
//	  version: 4.18.3
//	  relatedImages:
//	  - name: lvms-operator
//	    image: registry.redhat.io/lvms4/lvms-rhel9-operator@sha256:...
type CSV struct {
	// Source names the input (its path) in messages.
	Source string
	// Name is metadata.name (e.g. lvms-operator.v4.18.3).
	Name string
	// Version is spec.version, "" when the CSV has none.
	Version string
	// Images are the named relatedImages, in CSV order.
	Images []NamedImage
	index  map[string]int
}

// Lookup returns the image of a relatedImages name.
func (c *CSV) Lookup(name string) (string, bool) {
	i, ok := c.index[name]
	if !ok {
		return "", false
	}
	return c.Images[i].Ref, true
}

// Names lists the relatedImages names in CSV order.
func (c *CSV) Names() []string {
	out := make([]string, len(c.Images))
	for i, im := range c.Images {
		out[i] = im.Name
	}
	return out
}

type csvDoc struct {
	Kind       string     `json:"kind"`
	APIVersion string     `json:"apiVersion"`
	Metadata   objectMeta `json:"metadata"`
	Spec       struct {
		Version       string `json:"version"`
		RelatedImages *[]struct {
			Name  string `json:"name"`
			Image string `json:"image"`
		} `json:"relatedImages"`
	} `json:"spec"`
}

// LoadCSV reads a ClusterServiceVersion file (YAML or JSON).
func LoadCSV(path string) (*CSV, error) {
	data, err := readInput("CSV", path)
	if err != nil {
		return nil, err
	}
	return ParseCSV(path, data)
}

// ParseCSV parses a ClusterServiceVersion strictly in what it reads: kind,
// apiVersion, and spec.relatedImages, which must be present with every
// image a valid reference and no name given two different images.
// Entries without a name are kept out: nothing can map to them.
func ParseCSV(display string, data []byte) (*CSV, error) {
	js, err := toJSON(display, data)
	if err != nil {
		return nil, err
	}
	var doc csvDoc
	if err := decodeInto(display, js, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != "ClusterServiceVersion" {
		if doc.Kind == "" {
			return nil, fmt.Errorf("%s: not a ClusterServiceVersion: no kind", display)
		}
		return nil, fmt.Errorf("%s: kind is %q, want ClusterServiceVersion (the bundle's manifests/*.clusterserviceversion.yaml)", display, doc.Kind)
	}
	if doc.APIVersion != "operators.coreos.com/v1alpha1" {
		return nil, fmt.Errorf("%s: apiVersion is %q, want operators.coreos.com/v1alpha1", display, doc.APIVersion)
	}
	if doc.Spec.RelatedImages == nil || len(*doc.Spec.RelatedImages) == 0 {
		return nil, fmt.Errorf("%s: CSV %s has no spec.relatedImages: the bundle does not list its images (build it with relatedImages, as disconnected installs need)", display, doc.Metadata.Name)
	}
	c := &CSV{Source: display, Name: doc.Metadata.Name, Version: strings.TrimPrefix(doc.Spec.Version, "v"), index: map[string]int{}}
	for i, ri := range *doc.Spec.RelatedImages {
		at := fmt.Sprintf("spec.relatedImages[%d]", i)
		if ri.Name != "" {
			at += fmt.Sprintf(" %q", ri.Name)
		}
		if ri.Image == "" {
			return nil, fmt.Errorf("%s: %s: image is empty", display, at)
		}
		if err := releases.ValidateRef(ri.Image); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", display, at, err)
		}
		if ri.Name == "" {
			continue
		}
		if j, dup := c.index[ri.Name]; dup {
			if c.Images[j].Ref == ri.Image {
				continue // listed twice, same image: harmless
			}
			return nil, fmt.Errorf("%s: %s: name also used for %s with another image", display, at, c.Images[j].Ref)
		}
		c.index[ri.Name] = len(c.Images)
		c.Images = append(c.Images, NamedImage{Name: ri.Name, Ref: ri.Image})
	}
	if len(c.Images) == 0 {
		return nil, fmt.Errorf("%s: CSV %s: no spec.relatedImages entry has a name, so no release key can map to one", display, c.Name)
	}
	return c, nil
}
