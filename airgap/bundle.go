package airgap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/releases"
)

// A differential bundle (mirror --since) is an OCI image layout, a
// directory or an archive (split or not), like any mirror writes:
// index.json names every image the new plan needs, and every manifest and
// index of those images is in blobs/; only the config and layer blobs its
// base reaches are left out (the image-layout spec lets a layout lack
// blobs an external store provides). Beside index.json, BundleFile says
// what it is: the composition IDs it carries, its images (the --image
// extras marked), its base (the composition IDs of base locks, the
// index.json digests of base layouts) and every blob it leaves out, by
// digest and size, with an image of the base that holds it. Its presence
// is what makes mirror --from apply the layout as a bundle: the blobs it
// leaves out must be at the destination already. Its bytes are
// deterministic: images sorted by reference, the omitted blobs by digest,
// the bases in the order given.
const (
	// BundleFile is the file a differential bundle holds beside index.json.
	BundleFile    = "microshift-compose-bundle.json"
	bundleSchema  = "microshift-compose/bundle/v1"
	maxBundleFile = 16 << 20
)

// Errors of differential bundles, for errors.Is.
var (
	// ErrBadBundle is wrapped when a BundleFile is malformed or disagrees
	// with the layout's index.json.
	ErrBadBundle = errors.New("invalid bundle")
	// ErrBaseMissing is wrapped when a bundle is applied to a destination
	// that lacks a blob the bundle leaves out.
	ErrBaseMissing = errors.New("the destination lacks the bundle's base")
	// ErrOtherArch is wrapped when a --since base is for another arch.
	ErrOtherArch = errors.New("a base for another arch")
)

// Bundle is the content of BundleFile.
type Bundle struct {
	Schema string `json:"schema"`
	// Arch is the plan's arch ("" when the images came from a layout
	// without a plan).
	Arch string `json:"arch"`
	// Compositions are the composition IDs of the plans the bundle
	// carries.
	Compositions []string      `json:"compositions"`
	Images       []BundleImage `json:"images"`
	Base         []BundleBase  `json:"base"`
	// Omitted are the blobs the bundle leaves out, sorted by digest, and
	// OmittedBytes their total size.
	Omitted      []OmittedBlob `json:"omitted"`
	OmittedBytes int64         `json:"omitted_bytes"`
}

// BundleImage is an image a bundle carries, as index.json names it.
type BundleImage struct {
	Ref    string `json:"ref"`
	Digest string `json:"digest"`
	// Extra marks an image beyond the plan (mirror --image): the OS image.
	Extra bool `json:"extra,omitempty"`
}

// BundleBase is one --since: a lock (its composition ID) or a layout (the
// sha256 of its index.json, and the compositions it records if it is a
// bundle itself).
type BundleBase struct {
	Composition string `json:"composition,omitempty"`
	// Image is an image the site holds (--since REF@sha256:…): the OS
	// image its devices run, which no lock names.
	Image        string   `json:"image,omitempty"`
	Index        string   `json:"index,omitempty"`
	Compositions []string `json:"compositions,omitempty"`
	// Images is how many images the base names.
	Images int `json:"images"`
}

// OmittedBlob is a blob a bundle leaves out because its base holds it.
type OmittedBlob struct {
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
	// In is an image of the base that holds it: where a registry
	// destination can mount it from.
	In string `json:"in"`
}

// Base is what a differential bundle is made against: what the site holds
// already. Either a lock's images (Refs, with its Composition and Arch),
// whose manifests are read from the mirror's source to know what they
// reach, or an image layout, archive or split archive (Layout).
type Base struct {
	// Name is how the user named it, for messages.
	Name        string
	Refs        []string
	Composition string
	Arch        releases.Arch
	Layout      Target
	// Image, with Refs holding it alone, is an image the site holds.
	Image string
}

// BundleOptions make Mirror write a differential bundle.
type BundleOptions struct {
	// Since are the bases (at least one).
	Since []Base
	// Compositions are the composition IDs of the plan the bundle carries.
	Compositions []string
	// Extra are the images beyond the plan (mirror --image), a subset of
	// the images mirrored.
	Extra []string
}

var compositionID = hexDigest // a composition ID is a sha256 in hex

// ParseBundle decodes a BundleFile strictly and checks it: schema, arch,
// composition IDs, image references and digests, omitted blobs sorted and
// unique with sizes that add up. Errors name the file and the field.
func ParseBundle(display string, data []byte) (*Bundle, error) {
	bad := func(format string, args ...any) (*Bundle, error) {
		return nil, fmt.Errorf("%s: %w: %s", display, ErrBadBundle, fmt.Sprintf(format, args...))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b Bundle
	if err := dec.Decode(&b); err != nil {
		return bad("%v", err)
	}
	if dec.More() {
		return bad("more than one JSON value")
	}
	if b.Schema != bundleSchema {
		return bad("schema %q, want %q", b.Schema, bundleSchema)
	}
	if b.Arch != "" {
		if _, err := releases.ParseArch(b.Arch); err != nil {
			return bad("arch: %v", err)
		}
	}
	checkIDs := func(field string, ids []string) error {
		for i, id := range ids {
			if !compositionID.MatchString(id) {
				return fmt.Errorf("%s[%d] %q is not a composition ID (64 lowercase hex digits)", field, i, clip(id))
			}
		}
		return nil
	}
	if err := checkIDs("compositions", b.Compositions); err != nil {
		return bad("%v", err)
	}
	if len(b.Images) == 0 {
		return bad("images: none")
	}
	for i, im := range b.Images {
		if !validReference(registryclient.Options{}, im.Ref) {
			return bad("images[%d].ref %q is not a full image reference", i, clip(im.Ref))
		}
		if _, err := v1.NewHash(im.Digest); err != nil {
			return bad("images[%d].digest %q is not a sha256 digest", i, clip(im.Digest))
		}
		if i > 0 && b.Images[i-1].Ref >= im.Ref {
			return bad("images[%d]: %s is out of order or listed twice (images are sorted by reference)", i, clip(im.Ref))
		}
	}
	if len(b.Base) == 0 {
		return bad("base: none (a bundle is made against at least one base)")
	}
	for i, base := range b.Base {
		switch {
		case base.Composition != "" && base.Index != "":
			return bad("base[%d] has both a composition and an index", i)
		case base.Image != "" && (base.Composition != "" || base.Index != ""):
			return bad("base[%d] has an image and a composition or an index", i)
		case base.Image != "":
			if !validReference(registryclient.Options{}, base.Image) || !strings.Contains(base.Image, "@sha256:") {
				return bad("base[%d].image %q is not an image reference pinned by digest", i, clip(base.Image))
			}
		case base.Composition != "":
			if err := checkIDs(fmt.Sprintf("base[%d].composition", i), []string{base.Composition}); err != nil {
				return bad("%v", err)
			}
		case base.Index != "":
			if _, err := v1.NewHash(base.Index); err != nil {
				return bad("base[%d].index %q is not a sha256 digest", i, clip(base.Index))
			}
		}
		if err := checkIDs(fmt.Sprintf("base[%d].compositions", i), base.Compositions); err != nil {
			return bad("%v", err)
		}
		if base.Images < 0 {
			return bad("base[%d].images is negative", i)
		}
	}
	var total int64
	for i, o := range b.Omitted {
		if _, err := v1.NewHash(o.Digest); err != nil {
			return bad("omitted[%d].digest %q is not a sha256 digest", i, clip(o.Digest))
		}
		if i > 0 && b.Omitted[i-1].Digest >= o.Digest {
			return bad("omitted[%d]: %s is out of order or listed twice (sorted by digest)", i, o.Digest)
		}
		if o.Size < 0 {
			return bad("omitted[%d] (%s): negative size", i, o.Digest)
		}
		if o.In != "" && !validReference(registryclient.Options{}, o.In) {
			return bad("omitted[%d].in %q is not a full image reference", i, clip(o.In))
		}
		total += o.Size
		if total < 0 {
			return bad("omitted: the sizes overflow")
		}
	}
	if total != b.OmittedBytes {
		return bad("omitted_bytes is %d, the omitted blobs add up to %d", b.OmittedBytes, total)
	}
	return &b, nil
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// matchIndex checks that the bundle's images are exactly the layout's, by
// name and digest: a bundle whose file and index.json disagree (an
// incomplete run, an edited index) is refused.
func (b *Bundle) matchIndex(byName map[string]v1.Descriptor) error {
	for _, im := range b.Images {
		d, ok := byName[im.Ref]
		if !ok {
			return fmt.Errorf("%w: it lists %s, which %s does not name (an incomplete bundle: run the mirror that wrote it again)", ErrBadBundle, im.Ref, indexFile)
		}
		if d.Digest.String() != im.Digest {
			return fmt.Errorf("%w: it lists %s with digest %s, %s with %s", ErrBadBundle, im.Ref, im.Digest, indexFile, d.Digest)
		}
	}
	if len(byName) != len(b.Images) {
		for n := range byName {
			if !slices.ContainsFunc(b.Images, func(im BundleImage) bool { return im.Ref == n }) {
				return fmt.Errorf("%w: %s names %s, which the bundle does not list", ErrBadBundle, indexFile, n)
			}
		}
	}
	return nil
}

// omittedSet is the bundle's omitted blobs by digest.
func (b *Bundle) omittedSet() map[v1.Hash]OmittedBlob {
	out := make(map[v1.Hash]OmittedBlob, len(b.Omitted))
	for _, o := range b.Omitted {
		d, _ := v1.NewHash(o.Digest)
		out[d] = o
	}
	return out
}

// describeBase names a bundle's base in a message.
func (b *Bundle) describeBase() string {
	var parts []string
	for _, base := range b.Base {
		switch {
		case base.Composition != "":
			parts = append(parts, "composition "+shortID(base.Composition))
		case len(base.Compositions) > 0:
			ids := make([]string, len(base.Compositions))
			for i, c := range base.Compositions {
				ids[i] = shortID(c)
			}
			parts = append(parts, "the bundle of composition "+strings.Join(ids, ", "))
		case base.Image != "":
			parts = append(parts, "the image "+base.Image)
		case base.Index != "":
			parts = append(parts, "the layout whose index.json is "+shortID(strings.TrimPrefix(base.Index, "sha256:")))
		default:
			parts = append(parts, "a plan without a composition ID")
		}
	}
	return strings.Join(parts, "; ")
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// encode is the BundleFile's bytes: indented JSON, a final newline.
func (b *Bundle) encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	c := *b
	for _, l := range []*[]string{&c.Compositions} {
		if *l == nil {
			*l = []string{}
		}
	}
	if c.Omitted == nil {
		c.Omitted = []OmittedBlob{}
	}
	if err := enc.Encode(&c); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", BundleFile, err)
	}
	return buf.Bytes(), nil
}

// checkBundleArch is the one rule for a bundle's arch, at both doors: a
// bundle taken as a base (--since) and a bundle applied (--from) must be
// for the arch of the plan at hand, when both say one.
func checkBundleArch(b *Bundle, arch releases.Arch, where Target) error {
	if b == nil || b.Arch == "" || arch == "" || b.Arch == string(arch) {
		return nil
	}
	return fmt.Errorf("%s: %w: it is a bundle for %s, and the plan is for %s; a bundle carries one arch's images to the devices of that arch", where, ErrOtherArch, b.Arch, arch)
}

// checkBundleDestination refuses to mix bundles and full layouts: a plain
// mirror into a bundle would leave a layout that lacks blobs and no
// longer says so; a bundle into a layout holding images would be neither.
func (l *layout) checkBundleDestination(to Target, writingBundle bool) error {
	_, err := os.Stat(filepath.Join(l.dir, BundleFile))
	return checkBundleMix(to, err == nil, len(l.index.Manifests) > 0, writingBundle)
}

func checkBundleMix(to Target, isBundle, hasImages, writingBundle bool) error {
	switch {
	case isBundle && !writingBundle:
		return fmt.Errorf("%w %q: it is a differential bundle (it has %s): apply it with mirror --from %s, or mirror to another destination", ErrBadDestination, to, BundleFile, to)
	case !isBundle && writingBundle && hasImages:
		return fmt.Errorf("%w %q: it holds images and is not a differential bundle: --since writes a new bundle; choose a new destination", ErrBadDestination, to)
	}
	return nil
}
