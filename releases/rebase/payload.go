package rebase

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/releases"
)

// Payload is what an OpenShift release payload says about its component
// images: the release version and, per image-references tag, the image.
//
// Two inputs carry it. The payload's own release-manifests/image-references
// file (`oc adm release extract --file=image-references`) is an ImageStream
// named after the release version:
//
//	{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1",
//	 "metadata": {"name": "4.18.0-0.nightly-...", "annotations": {...}},
//	 "spec": {"tags": [{"name": "cli", "from": {"kind": "DockerImage", "name": "quay.io/...@sha256:..."}}, ...]}}
//
// `oc adm release info -o json RELEASE` (what MicroShift's own rebase
// script reads) wraps the same ImageStream in "references", with the
// release-metadata version in "metadata.version" and the release image's
// config (and so its architecture) in "config".
type Payload struct {
	// Source names the input (its path) in messages.
	Source string
	// Version is the release version: release-metadata's version, or the
	// image-references ImageStream's name.
	Version string
	// Arch is the payload's architecture in GOARCH spelling as far as the
	// input tells ("amd64", "arm64", "multi"), or "".
	Arch string
	// Images are the DockerImage tags of spec.tags, in payload order.
	Images []NamedImage
	index  map[string]int
}

// Lookup returns the image of a tag.
func (p *Payload) Lookup(name string) (string, bool) {
	i, ok := p.index[name]
	if !ok {
		return "", false
	}
	return p.Images[i].Ref, true
}

// Names lists the payload's tag names in payload order.
func (p *Payload) Names() []string {
	out := make([]string, len(p.Images))
	for i, im := range p.Images {
		out[i] = im.Name
	}
	return out
}

// CheckArch fails when the payload says it is for another architecture
// than arch (from the release image's config, or a nightly's name such as
// 4.18.0-0.nightly-arm64-...). Multi-arch payloads fit every arch.
func (p *Payload) CheckArch(arch releases.Arch) error {
	if p.Arch == "" || p.Arch == "multi" || p.Arch == arch.GOARCH() {
		return nil
	}
	return fmt.Errorf("release %s is for %s, not %s (%s)", p.Version, p.Arch, arch, arch.GOARCH())
}

type objectMeta struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations"`
}

type imageStreamDoc struct {
	Kind       string     `json:"kind"`
	APIVersion string     `json:"apiVersion"`
	Metadata   objectMeta `json:"metadata"`
	Spec       struct {
		Tags []tagDoc `json:"tags"`
	} `json:"spec"`
}

type tagDoc struct {
	Name string `json:"name"`
	From *struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"from"`
}

// releaseInfoDoc is `oc adm release info -o json` (openshift/oc
// pkg/cli/admin/release ReleaseInfo), the fields read here.
type releaseInfoDoc struct {
	Image  string `json:"image"`
	Config *struct {
		Architecture string `json:"architecture"`
	} `json:"config"`
	Metadata *struct {
		Kind    string `json:"kind"`
		Version string `json:"version"`
	} `json:"metadata"`
	References *imageStreamDoc `json:"references"`
}

// LoadPayload reads a payload file (JSON or YAML); see Payload.
func LoadPayload(path string) (*Payload, error) {
	data, err := readInput("payload", path)
	if err != nil {
		return nil, err
	}
	return ParsePayload(path, data)
}

// ParsePayload parses image-references or `oc adm release info -o json`
// output. It is strict about what it reads (kind, apiVersion, tag names,
// from.kind, every reference a valid image reference, a semantic release
// version) and ignores the many fields it does not read, which the
// OpenShift APIs add to over time. display names the input in errors.
func ParsePayload(display string, data []byte) (*Payload, error) {
	js, err := toJSON(display, data)
	if err != nil {
		return nil, err
	}
	var probe struct {
		Kind       string          `json:"kind"`
		References json.RawMessage `json:"references"`
	}
	if err := decodeInto(display, js, &probe); err != nil {
		return nil, err
	}
	p := &Payload{Source: display, index: map[string]int{}}
	var is *imageStreamDoc
	field := "" // path prefix of the ImageStream in the document
	switch {
	case probe.References != nil:
		var info releaseInfoDoc
		if err := decodeInto(display, js, &info); err != nil {
			return nil, err
		}
		if info.References == nil {
			return nil, fmt.Errorf("%s: references is null; want the release's image-references ImageStream", display)
		}
		is, field = info.References, "references."
		if info.Metadata != nil {
			p.Version = info.Metadata.Version
		}
		if info.Config != nil {
			p.Arch = normalizeArch(info.Config.Architecture)
		}
	case probe.Kind == "ImageStream":
		is = &imageStreamDoc{}
		if err := decodeInto(display, js, is); err != nil {
			return nil, err
		}
	case probe.Kind == "":
		return nil, fmt.Errorf("%s: not a release payload: no kind and no references (want the payload's image-references ImageStream or `oc adm release info -o json` output)", display)
	default:
		return nil, fmt.Errorf("%s: kind %q is not a release payload (want the payload's image-references ImageStream or `oc adm release info -o json` output)", display, probe.Kind)
	}
	if is.Kind != "ImageStream" {
		return nil, fmt.Errorf("%s: %skind is %q, want ImageStream", display, field, is.Kind)
	}
	if is.APIVersion != "image.openshift.io/v1" {
		return nil, fmt.Errorf("%s: %sapiVersion is %q, want image.openshift.io/v1", display, field, is.APIVersion)
	}
	if p.Version == "" {
		p.Version = is.Metadata.Name
	}
	if strings.TrimSpace(p.Version) == "" {
		return nil, fmt.Errorf("%s: no release version: %smetadata.name is empty", display, field)
	}
	if _, err := semver.NewVersion(p.Version); err != nil {
		return nil, fmt.Errorf("%s: release version %q is not a semantic version: %v", display, p.Version, err)
	}
	if p.Arch == "" {
		p.Arch = versionArch(p.Version)
	}
	if len(is.Spec.Tags) == 0 {
		return nil, fmt.Errorf("%s: %sspec.tags is empty: the payload names no images", display, field)
	}
	for i, tag := range is.Spec.Tags {
		at := fmt.Sprintf("%sspec.tags[%d]", field, i)
		if strings.TrimSpace(tag.Name) == "" {
			return nil, fmt.Errorf("%s: %s: name is empty", display, at)
		}
		at += fmt.Sprintf(" %q", tag.Name)
		if j, dup := p.index[tag.Name]; dup {
			return nil, fmt.Errorf("%s: %s: duplicate tag name (also %sspec.tags[%d])", display, at, field, j)
		}
		if tag.From == nil || tag.From.Name == "" {
			return nil, fmt.Errorf("%s: %s: from.name is missing", display, at)
		}
		if tag.From.Kind != "DockerImage" {
			return nil, fmt.Errorf("%s: %s: from.kind is %q, want DockerImage", display, at, tag.From.Kind)
		}
		if err := releases.ValidateRef(tag.From.Name); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", display, at, err)
		}
		p.index[tag.Name] = len(p.Images)
		p.Images = append(p.Images, NamedImage{Name: tag.Name, Ref: tag.From.Name})
	}
	return p, nil
}

// normalizeArch spells an architecture the GOARCH way.
func normalizeArch(a string) string {
	switch a {
	case "x86_64":
		return "amd64"
	case "aarch64":
		return "arm64"
	}
	return a
}

// versionArch reads the architecture a release name carries, as nightly
// and CI payloads do for every arch but amd64 (4.18.0-0.nightly-arm64-...,
// 4.18.0-0.nightly-multi-...). GA versions carry none.
func versionArch(version string) string {
	for _, tok := range strings.FieldsFunc(version, func(r rune) bool { return r == '-' || r == '.' || r == '+' }) {
		switch tok {
		case "amd64", "x86_64", "arm64", "aarch64", "ppc64le", "s390x", "multi":
			return normalizeArch(tok)
		}
	}
	return ""
}
