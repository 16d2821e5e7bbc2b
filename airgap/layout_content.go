package airgap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

// ErrBlobNotInLayout is wrapped when a blob an image of a layout refers to
// is not in the layout: a differential bundle leaves out the blobs its base
// holds.
var ErrBlobNotInLayout = errors.New("blob not in the layout")

// LayoutContent is an OCI image layout (oci:DIR) or archive
// (oci-archive:FILE) opened for reading in place, with the manifests of
// every image it names read and verified: what `serve` offers. Blobs are
// not read until asked for, and may be absent.
type LayoutContent struct {
	// Images are the images index.json names, sorted by name.
	Images []LayoutImage
	// Blobs are the config and layer blobs the images refer to that the
	// layout holds, with their sizes; Missing those it does not hold.
	Blobs   map[v1.Hash]int64
	Missing map[v1.Hash]bool
	src     *layoutSource
}

// LayoutImage is one image a layout names.
type LayoutImage struct {
	// Name is its org.opencontainers.image.ref.name: the reference the plan
	// writes, registry included.
	Name string
	// Ref is Name parsed.
	Ref name.Reference
	// Manifests are the manifests the layout holds for it, children before
	// the index that lists them, the one Name names last. Of a partial
	// index (mirror --to oci: keeps one arch) only the manifests present.
	Manifests []LayoutManifest
	// Blobs are its config and layer descriptors, unique.
	Blobs []v1.Descriptor
}

// LayoutManifest is a manifest as the layout holds it, verified against
// its digest.
type LayoutManifest struct {
	Digest    v1.Hash
	MediaType types.MediaType
	Data      []byte
}

// ReadLayout opens the layout or archive from names and reads every
// image's manifests. It is the one place `serve` reads a layout through,
// so that whatever form a bundle takes that mirror --from reads (the
// layout source) is served too.
func ReadLayout(ctx context.Context, from Target) (*LayoutContent, error) {
	reg := registryclient.Options{}
	src, err := openLayoutSource(from, reg)
	if err != nil {
		return nil, err
	}
	c := &LayoutContent{src: src, Blobs: map[v1.Hash]int64{}, Missing: map[v1.Hash]bool{}}
	for _, n := range src.names() {
		im, err := resolve(ctx, src, n, selection{})
		if err != nil {
			src.close()
			return nil, fmt.Errorf("reading %s: %w", from, err)
		}
		li := LayoutImage{Name: n, Ref: im.ref, Blobs: im.Blobs}
		for _, m := range im.Manifests {
			li.Manifests = append(li.Manifests, LayoutManifest(m))
		}
		for _, b := range im.Blobs {
			if _, ok := c.Blobs[b.Digest]; ok || c.Missing[b.Digest] {
				continue
			}
			rc, size, err := src.store.open(b.Digest)
			if errors.Is(err, errMissing) {
				c.Missing[b.Digest] = true
				continue
			}
			if err != nil {
				src.close()
				return nil, fmt.Errorf("reading %s: blob %w", from, err)
			}
			rc.Close()
			if size != b.Size {
				src.close()
				return nil, fmt.Errorf("reading %s: %s: blob %s: %w: %d bytes in the layout, the manifest says %d", from, n, b.Digest, ErrDigestMismatch, size, b.Size)
			}
			c.Blobs[b.Digest] = size
		}
		c.Images = append(c.Images, li)
	}
	return c, nil
}

// OpenBlob streams a blob from offset on. A blob the layout does not hold
// is an error wrapping ErrBlobNotInLayout. The content is not verified:
// whoever pulls it checks it against its digest.
func (c *LayoutContent) OpenBlob(d v1.Hash, offset int64) (io.ReadCloser, error) {
	size, ok := c.Blobs[d]
	if !ok {
		return nil, fmt.Errorf("%s: %w", d, ErrBlobNotInLayout)
	}
	if offset < 0 || offset > size {
		return nil, fmt.Errorf("%s: offset %d outside its %d bytes", d, offset, size)
	}
	// An archive is read in place: a range is a section of the tar.
	if a, ok := c.src.store.(*archiveStore); ok {
		e, ok := a.entry(path.Join("blobs", d.Algorithm, d.Hex))
		if !ok {
			return nil, fmt.Errorf("%s: %w", d, ErrBlobNotInLayout)
		}
		return io.NopCloser(io.NewSectionReader(a.f, e.offset+offset, e.size-offset)), nil
	}
	rc, _, err := c.src.store.open(d)
	if errors.Is(err, errMissing) {
		return nil, fmt.Errorf("%s: %w", d, ErrBlobNotInLayout)
	}
	if err != nil {
		return nil, err
	}
	if offset == 0 {
		return rc, nil
	}
	if s, ok := rc.(io.Seeker); ok {
		_, err = s.Seek(offset, io.SeekStart)
	} else {
		_, err = io.CopyN(io.Discard, rc, offset)
	}
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("reading blob %s: %w", d, err)
	}
	return rc, nil
}

// Close releases the layout (an archive's open file).
func (c *LayoutContent) Close() error { return c.src.close() }
