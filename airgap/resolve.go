package airgap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/containers/image/v5/docker/reference"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/sizes"
	"github.com/microshift-compose/microshift-compose/releases"
)

// ErrNoPlatform is wrapped when an index has no manifest for the plan's arch.
var ErrNoPlatform = errors.New("no manifest for the platform")

// ErrUnsupported is wrapped for manifests mirror cannot copy faithfully.
var ErrUnsupported = errors.New("unsupported manifest")

// ErrPartialIndex is wrapped when an image layout holds only some platforms
// of an index and every platform is needed (a registry destination).
var ErrPartialIndex = errors.New("the layout holds only some platforms of the index")

// maxIndexDepth bounds nested indexes (an index of indexes is legal, and
// rare; a cycle is impossible with content addressing, a deep chain is not).
const maxIndexDepth = 4

// manifestBlob is a manifest exactly as the source served it: its digest
// is the sha256 of Data, checked when it was read.
type manifestBlob struct {
	Digest    v1.Hash
	MediaType types.MediaType
	Data      []byte
}

// image is one of the plan's images with everything a copy needs: the
// manifests to store (children before the top-level one they are
// referenced from) and the config and layer blobs of the platforms copied.
type image struct {
	Ref string         // as the plan writes it
	ref name.Reference // parsed: what the destination is named after
	// from is the repository a registry source reads it from: its own, or
	// a registries.conf mirror's. Nil for a layout source.
	from *name.Repository
	Top  manifestBlob // what Ref names: an index or a manifest
	// Manifests are the manifest blobs to store, children first, Top last.
	Manifests []manifestBlob
	// Blobs are config and layer descriptors, unique, in manifest order.
	Blobs []v1.Descriptor
	// Platform is the digest of the plan arch's image manifest (Top's when
	// Top is a manifest), what Footprint reports.
	Platform v1.Hash
	// Sparse is set when Top is an index of which only some manifests are
	// copied.
	Sparse bool
	// Platforms is how many image manifests are copied.
	Platforms int
	// Subject is set when Top is an OCI 1.1 referrer: what it refers to.
	// ArtifactType is Top's (else its config's media type).
	Subject      *v1.Descriptor
	ArtifactType string
}

// Bytes is the sum of the image's blob sizes.
func (im *image) Bytes() int64 {
	var n int64
	for _, b := range im.Blobs {
		n += b.Size
	}
	return n
}

// source is where images are copied from: their registries (through
// registries.conf mirrors) or an image layout (a directory or an archive).
type source interface {
	// top reads the manifest ref names; the returned image has Ref, ref,
	// Top (verified against the reference's digest) and, for a registry,
	// from set.
	top(ctx context.Context, ref string) (*image, error)
	// child reads the manifest d an index of im lists, verified. A layout
	// that lacks it returns an error wrapping errMissing.
	child(ctx context.Context, im *image, d v1.Descriptor) (manifestBlob, error)
	// openBlob starts streaming a blob. The body is not verified here:
	// the destination hashes what it stores, which spares a second pass.
	openBlob(ctx context.Context, im *image, d v1.Descriptor) (io.ReadCloser, error)
	close() error
}

// errMissing is a manifest or blob an image layout does not hold.
var errMissing = errors.New("not in the layout")

// selection says which manifests of an index to copy.
type selection struct {
	// whole copies every manifest; one the source lacks is an error.
	whole bool
	// arch, when whole is not set, picks linux/<arch>. Empty: every
	// manifest the source holds (a layout mirrored for one arch).
	arch releases.Arch
}

// resolve reads the manifests of ref from src and lists what a copy needs.
func resolve(ctx context.Context, src source, ref string, sel selection) (*image, error) {
	im, err := src.top(ctx, ref)
	if err != nil {
		return nil, err
	}
	if f, err := parseReferrer(im.Top.Data); err == nil {
		im.Subject = f.Subject
		if f.Subject != nil || f.ArtifactType != "" {
			im.ArtifactType = f.artifactType()
		}
	}
	seen := map[v1.Hash]bool{}
	add := func(d v1.Descriptor) {
		if !seen[d.Digest] {
			seen[d.Digest] = true
			im.Blobs = append(im.Blobs, d)
		}
	}
	if err := walk(ctx, src, im, im.Top, sel, 0, add); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return im, nil
}

func walk(ctx context.Context, src source, im *image, m manifestBlob, sel selection, depth int, add func(v1.Descriptor)) error {
	switch {
	case m.MediaType.IsIndex():
		if depth >= maxIndexDepth {
			return fmt.Errorf("%w: indexes nested deeper than %d", ErrUnsupported, maxIndexDepth)
		}
		idx, err := v1.ParseIndexManifest(bytes.NewReader(m.Data))
		if err != nil {
			return fmt.Errorf("parsing index %s: %w", m.Digest, err)
		}
		children := idx.Manifests
		if !sel.whole && sel.arch != "" {
			child, err := pick(idx, sel.arch)
			if err != nil {
				return err
			}
			children = []v1.Descriptor{child}
			im.Sparse = len(idx.Manifests) > 1
		}
		for _, c := range children {
			if err := checkDigest(c); err != nil {
				return err
			}
			cm, err := src.child(ctx, im, c)
			if errors.Is(err, errMissing) {
				if sel.whole {
					return fmt.Errorf("%w %s (it lacks %s): a registry needs every platform of an index; mirror the image into the layout again with --all-platforms", ErrPartialIndex, m.Digest, describePlatform(c))
				}
				if sel.arch == "" {
					im.Sparse = true
					continue
				}
			}
			if err != nil {
				return fmt.Errorf("reading manifest %s: %w", c.Digest, err)
			}
			if int64(len(cm.Data)) != c.Size {
				return fmt.Errorf("manifest %s: %w: %d bytes, the index says %d", c.Digest, ErrDigestMismatch, len(cm.Data), c.Size)
			}
			if err := walk(ctx, src, im, cm, sel, depth+1, add); err != nil {
				return err
			}
		}
	case m.MediaType.IsImage():
		mf, err := v1.ParseManifest(bytes.NewReader(m.Data))
		if err != nil {
			return fmt.Errorf("parsing manifest %s: %w", m.Digest, err)
		}
		if err := checkDigest(mf.Config); err != nil {
			return err
		}
		add(mf.Config)
		for _, l := range mf.Layers {
			if !l.MediaType.IsDistributable() || len(l.URLs) > 0 {
				continue // foreign layers live outside the registry
			}
			if err := checkDigest(l); err != nil {
				return err
			}
			add(l)
		}
		im.Platforms++
		if im.Platform == (v1.Hash{}) {
			im.Platform = m.Digest
		}
	case m.MediaType.IsSchema1():
		return fmt.Errorf("%w: %s is %s", ErrUnsupported, m.Digest, schema1Reason)
	default:
		return fmt.Errorf("%w: media type %q of %s is neither an image nor an index", ErrUnsupported, m.MediaType, m.Digest)
	}
	im.Manifests = append(im.Manifests, m)
	return nil
}

func describePlatform(d v1.Descriptor) string {
	if d.Platform != nil {
		return d.Platform.String() + " " + d.Digest.String()
	}
	return d.Digest.String()
}

// pick chooses the arch's manifest out of an index: linux/<GOARCH>,
// preferring no variant or the arch's usual one (v8 for arm64).
func pick(idx *v1.IndexManifest, arch releases.Arch) (v1.Descriptor, error) {
	want := arch.GOARCH()
	var have []string
	var match, other []v1.Descriptor
	for _, d := range idx.Manifests {
		p := d.Platform
		if p == nil {
			continue
		}
		have = append(have, p.String())
		if p.OS == "linux" && p.Architecture == want {
			if d.MediaType.IsImage() {
				match = append(match, d)
			} else {
				other = append(other, d)
			}
		}
	}
	for _, d := range match {
		if v := d.Platform.Variant; v == "" || (want == "arm64" && v == "v8") {
			return d, nil
		}
	}
	if len(match) > 0 {
		return match[0], nil
	}
	if len(other) > 0 {
		// The index has the platform, as something that is not an
		// image manifest: say what, not that the platform is missing.
		d := other[0]
		switch {
		case d.MediaType.IsIndex():
			return v1.Descriptor{}, fmt.Errorf("%w: the index lists another index (%s) for linux/%s (%s), and an index inside an index is not read: name the inner index or the image manifest by digest", ErrUnsupported, d.Digest, want, arch)
		case d.MediaType.IsSchema1():
			return v1.Descriptor{}, fmt.Errorf("%w: the index lists %s for linux/%s (%s): %s", ErrUnsupported, d.Digest, want, arch, schema1Reason)
		}
		return v1.Descriptor{}, fmt.Errorf("%w: the index lists %s for linux/%s (%s) with media type %q, which is not an image manifest", ErrUnsupported, d.Digest, want, arch, d.MediaType)
	}
	slices.Sort(have)
	return v1.Descriptor{}, fmt.Errorf("%w linux/%s (%s) in the index (it has %s)", ErrNoPlatform, want, arch, strings.Join(slices.Compact(have), ", "))
}

// schema1Reason is why a Docker schema 1 manifest is refused, wherever it
// is met (mirror, footprint, diff): one reason, true for each of them.
const schema1Reason = "a Docker schema 1 manifest, a format deprecated since 2017 that this tool does not read (it states no layer sizes and has no OCI form); re-push the image with Docker schema 2 or OCI media types"

func checkDigest(d v1.Descriptor) error {
	if d.Digest.Algorithm != "sha256" || len(d.Digest.Hex) != 64 {
		return fmt.Errorf("%w: descriptor digest %q is not sha256", ErrUnsupported, d.Digest)
	}
	// A size a source states is checked once here, for every use of it
	// (mirror's progress, footprint, diff): within internal/sizes' bound.
	if err := sizes.CheckBlob("descriptor "+d.Digest.String(), d.Size); err != nil {
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return nil
}

// verifyManifest checks that data is the manifest d names: its sha256
// and, when the descriptor gives one, its size.
func verifyManifest(data []byte, want v1.Hash) error {
	got, _, err := v1.SHA256(bytes.NewReader(data))
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("manifest %s: %w: the source served content with digest %s", want, ErrDigestMismatch, got)
	}
	return nil
}

// ErrDigestMismatch is wrapped when content does not hash to the digest
// that names it. Such content is refused, never stored.
var ErrDigestMismatch = errors.New("content does not match its digest")

// referrerFields are the parts of a manifest that make it a referrer.
type referrerFields struct {
	MediaType    string         `json:"mediaType"`
	ArtifactType string         `json:"artifactType"`
	Subject      *v1.Descriptor `json:"subject"`
	Config       struct {
		MediaType string `json:"mediaType"`
	} `json:"config"`
	Layers []v1.Descriptor `json:"layers"`
}

func parseReferrer(data []byte) (referrerFields, error) {
	var f referrerFields
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("parsing manifest: %w", err)
	}
	return f, nil
}

// artifactType is the manifest's artifactType, else its config's media
// type (the distribution spec's rule for the referrers list).
func (f referrerFields) artifactType() string {
	if f.ArtifactType != "" {
		return f.ArtifactType
	}
	return f.Config.MediaType
}

// validReference reports whether n is a full image reference for both
// go-containerregistry (which reads the images) and containers/image's
// grammar (which podman and the device apply: it refuses path components
// such as "..", which go-containerregistry lets through).
func validReference(reg registryclient.Options, n string) bool {
	if _, err := reg.ParseReference(n); err != nil {
		return false
	}
	_, err := reference.ParseNormalizedNamed(n)
	return err == nil
}

var hexDigest = lazyregexp.New(`^[0-9a-f]{64}$`)

// jobsOf is the concurrency bound of registry work: --jobs, or the
// default.
func jobsOf(reg registryclient.Options) int {
	if reg.Jobs <= 0 {
		return registryclient.DefaultJobs
	}
	return reg.Jobs
}
