package airgap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/releases"
)

// ErrNoPlatform is wrapped when an index has no manifest for the plan's arch.
var ErrNoPlatform = errors.New("no manifest for the platform")

// ErrUnsupported is wrapped for manifests mirror cannot copy faithfully.
var ErrUnsupported = errors.New("unsupported manifest")

// maxIndexDepth bounds nested indexes (an index of indexes is legal, and
// rare; a cycle is impossible with content addressing, a deep chain is not).
const maxIndexDepth = 4

// manifestBlob is a manifest exactly as the registry served it: its digest
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
	Ref  string         // as the plan writes it
	ref  name.Reference // parsed, with --insecure-registry applied
	Top  manifestBlob   // what Ref names: an index or a manifest
	desc *remote.Descriptor
	// Manifests are the manifest blobs to store, children first, Top last.
	Manifests []manifestBlob
	// Blobs are config and layer descriptors, unique, in manifest order.
	Blobs []v1.Descriptor
	// Platform is the digest of the plan arch's image manifest (Top's when
	// Top is a manifest), what Footprint reports.
	Platform v1.Hash
	// Sparse is set when Top is an index of which only the plan arch's
	// manifest is copied.
	Sparse bool
	// Platforms is how many image manifests are copied.
	Platforms int
}

// Bytes is the sum of the image's blob sizes.
func (im *image) Bytes() int64 {
	var n int64
	for _, b := range im.Blobs {
		n += b.Size
	}
	return n
}

// reader reads manifests with one shared puller, and blobs with one HTTP
// client per repository, so that auth is negotiated once per repository.
type reader struct {
	reg    registryclient.Options
	puller *remote.Puller
	arch   releases.Arch

	mu      sync.Mutex
	clients map[string]*blobClient
}

type blobClient struct {
	once   sync.Once
	client *http.Client
	err    error
}

// openBlob starts streaming a blob. The body is not verified here: the
// layout writer hashes what it stores, which spares a second pass over
// every byte.
func (r *reader) openBlob(ctx context.Context, repo name.Repository, d v1.Descriptor) (io.ReadCloser, error) {
	r.mu.Lock()
	if r.clients == nil {
		r.clients = map[string]*blobClient{}
	}
	c := r.clients[repo.String()]
	if c == nil {
		c = &blobClient{}
		r.clients[repo.String()] = c
	}
	r.mu.Unlock()
	c.once.Do(func() {
		var rt http.RoundTripper
		if rt, c.err = r.reg.PullTransport(ctx, repo); c.err == nil {
			c.client = &http.Client{Transport: rt}
		}
	})
	if c.err != nil {
		return nil, c.err
	}
	u := url.URL{Scheme: repo.Scheme(), Host: repo.RegistryStr(), Path: "/v2/" + repo.RepositoryStr() + "/blobs/" + d.Digest.String()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	if err := transport.CheckError(resp, http.StatusOK); err != nil {
		resp.Body.Close()
		return nil, err
	}
	if resp.ContentLength >= 0 && resp.ContentLength != d.Size {
		resp.Body.Close()
		return nil, fmt.Errorf("blob %s: %w: the registry sends %d bytes, the manifest says %d", d.Digest, ErrDigestMismatch, resp.ContentLength, d.Size)
	}
	return resp.Body, nil
}

func newReader(ctx context.Context, reg registryclient.Options, arch releases.Arch) (*reader, error) {
	p, err := remote.NewPuller(reg.Remote(ctx)...)
	if err != nil {
		return nil, fmt.Errorf("setting up registry access: %w", err)
	}
	return &reader{reg: reg, puller: p, arch: arch}, nil
}

// get reads the manifest ref names, retrying drops go-containerregistry
// does not retry itself. A digest reference is checked against the bytes.
func (r *reader) get(ctx context.Context, ref name.Reference) (*remote.Descriptor, error) {
	var desc *remote.Descriptor
	err := r.reg.Retry(ctx, func() error {
		var err error
		desc, err = r.puller.Get(ctx, ref)
		return err
	})
	if err != nil {
		return nil, err
	}
	sum, _, err := v1.SHA256(bytes.NewReader(desc.Manifest))
	if err != nil {
		return nil, err
	}
	if d, ok := ref.(name.Digest); ok && sum.String() != d.DigestStr() {
		return nil, fmt.Errorf("manifest %s: %w: the registry served content with digest %s", d.DigestStr(), ErrDigestMismatch, sum)
	}
	if sum != desc.Digest {
		return nil, fmt.Errorf("manifest %s: %w: the registry served content with digest %s", desc.Digest, ErrDigestMismatch, sum)
	}
	return desc, nil
}

// resolve reads the manifests of ref. With whole set, every platform of an
// index is copied; otherwise only the plan arch's manifest and its blobs,
// under the index the reference names (a sparse index: its digest stays the
// one the release pins).
func (r *reader) resolve(ctx context.Context, refStr string, whole bool) (*image, error) {
	ref, err := r.reg.ParseReference(refStr)
	if err != nil {
		return nil, fmt.Errorf("parsing image reference %q: %w", refStr, err)
	}
	desc, err := r.get(ctx, ref)
	if err != nil {
		return nil, registryclient.Describe(refStr, err)
	}
	im := &image{Ref: refStr, ref: ref, desc: desc, Top: manifestBlob{desc.Digest, desc.MediaType, desc.Manifest}}
	seen := map[v1.Hash]bool{}
	add := func(d v1.Descriptor) {
		if !seen[d.Digest] {
			seen[d.Digest] = true
			im.Blobs = append(im.Blobs, d)
		}
	}
	if err := r.walk(ctx, im, im.Top, whole, 0, add); err != nil {
		return nil, fmt.Errorf("%s: %w", refStr, err)
	}
	return im, nil
}

func (r *reader) walk(ctx context.Context, im *image, m manifestBlob, whole bool, depth int, add func(v1.Descriptor)) error {
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
		if !whole {
			child, err := r.pick(idx)
			if err != nil {
				return err
			}
			children = []v1.Descriptor{child}
			im.Sparse = true
		}
		for _, c := range children {
			if err := checkDigest(c); err != nil {
				return err
			}
			desc, err := r.get(ctx, im.ref.Context().Digest(c.Digest.String()))
			if err != nil {
				return fmt.Errorf("reading manifest %s: %w", c.Digest, err)
			}
			if desc.Size != c.Size {
				return fmt.Errorf("manifest %s: %w: %d bytes, the index says %d", c.Digest, ErrDigestMismatch, desc.Size, c.Size)
			}
			if err := r.walk(ctx, im, manifestBlob{desc.Digest, desc.MediaType, desc.Manifest}, whole, depth+1, add); err != nil {
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
		return fmt.Errorf("%w: %s is a Docker schema 1 manifest, which cannot be stored with its digest; rebuild or re-push the image", ErrUnsupported, m.Digest)
	default:
		return fmt.Errorf("%w: media type %q of %s is neither an image nor an index", ErrUnsupported, m.MediaType, m.Digest)
	}
	im.Manifests = append(im.Manifests, m)
	return nil
}

// pick chooses the plan arch's manifest out of an index: linux/<GOARCH>,
// preferring no variant or the arch's usual one (v8 for arm64).
func (r *reader) pick(idx *v1.IndexManifest) (v1.Descriptor, error) {
	want := r.arch.GOARCH()
	var have []string
	var match []v1.Descriptor
	for _, d := range idx.Manifests {
		p := d.Platform
		if p == nil {
			continue
		}
		have = append(have, p.String())
		if p.OS == "linux" && p.Architecture == want && d.MediaType.IsImage() {
			match = append(match, d)
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
	slices.Sort(have)
	return v1.Descriptor{}, fmt.Errorf("%w linux/%s (%s) in the index (it has %s)", ErrNoPlatform, want, r.arch, strings.Join(slices.Compact(have), ", "))
}

func checkDigest(d v1.Descriptor) error {
	if d.Digest.Algorithm != "sha256" || len(d.Digest.Hex) != 64 {
		return fmt.Errorf("%w: descriptor digest %q is not sha256", ErrUnsupported, d.Digest)
	}
	if d.Size < 0 {
		return fmt.Errorf("%w: descriptor %s has a negative size", ErrUnsupported, d.Digest)
	}
	return nil
}
