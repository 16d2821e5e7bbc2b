package airgap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

// What a set of images reaches is the one notion differential bundles
// (what the base holds is left out), applying them (what must already be
// at the destination) and pruning (what a kept composition needs) share:
// every manifest and index, config and layer blob, by digest, with its
// size, and one image that needs it (for messages, and as the repository a
// registry can mount it from).

// Reached is one blob of a Reach.
type Reached struct {
	Digest v1.Hash
	Size   int64
	// Manifest is set for manifests and indexes (stored as blobs in a
	// layout, pushed as manifests to a registry).
	Manifest bool
	// Image is the first image, in the order the images were given,
	// that reaches it.
	Image string
}

// Reach is the set of blobs some images reach.
type Reach struct {
	blobs map[v1.Hash]Reached
}

// NewReach is an empty Reach.
func NewReach() *Reach { return &Reach{blobs: map[v1.Hash]Reached{}} }

func (r *Reach) add(b Reached) {
	if _, ok := r.blobs[b.Digest]; !ok {
		r.blobs[b.Digest] = b
	}
}

// Get returns what the Reach knows of digest d.
func (r *Reach) Get(d v1.Hash) (Reached, bool) {
	b, ok := r.blobs[d]
	return b, ok
}

// Has reports whether the Reach holds digest d.
func (r *Reach) Has(d v1.Hash) bool {
	_, ok := r.blobs[d]
	return ok
}

// Len is the number of distinct blobs.
func (r *Reach) Len() int { return len(r.blobs) }

// Bytes is the sum of their sizes.
func (r *Reach) Bytes() int64 {
	var n int64
	for _, b := range r.blobs {
		n += b.Size
	}
	return n
}

// Blobs lists the blobs, sorted by digest.
func (r *Reach) Blobs() []Reached {
	out := slices.Collect(maps.Values(r.blobs))
	slices.SortFunc(out, func(a, b Reached) int { return compareHex(a.Digest, b.Digest) })
	return out
}

// Union adds every blob of o that r lacks.
func (r *Reach) Union(o *Reach) {
	for _, b := range o.Blobs() {
		r.add(b)
	}
}

func compareHex(a, b v1.Hash) int {
	switch {
	case a.String() < b.String():
		return -1
	case a.String() > b.String():
		return 1
	}
	return 0
}

// reachOf is what resolved images reach: their manifests and blobs.
func reachOf(images []*image) *Reach {
	r := NewReach()
	for _, im := range images {
		if im == nil {
			continue
		}
		for _, m := range im.Manifests {
			r.add(Reached{Digest: m.Digest, Size: int64(len(m.Data)), Manifest: true, Image: im.Ref})
		}
		for _, b := range im.Blobs {
			r.add(Reached{Digest: b.Digest, Size: b.Size, Image: im.Ref})
		}
	}
	return r
}

// ImagesReach reads the manifests of refs from opts.From (their
// registries through registries.conf mirrors, or a layout, an archive or a
// split archive) and returns what they reach: for opts.Arch's platform of
// an index, every platform with AllPlatforms, or, with neither, every
// platform the source holds (what a layout mirrored for one arch keeps).
// No blob is read. An image that cannot be read is an error naming it.
func ImagesReach(ctx context.Context, refs []string, opts Options) (*Reach, error) {
	src, err := openSource(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer src.close()
	images, err := resolveEach(ctx, src, refs, selection{whole: opts.AllPlatforms, arch: opts.Arch}, jobs(opts))
	if err != nil {
		return nil, err
	}
	return reachOf(images), nil
}

// resolveEach resolves every ref, concurrently; the first failure (in the
// order of refs) is the error.
func resolveEach(ctx context.Context, src source, refs []string, sel selection, limit int) ([]*image, error) {
	images := make([]*image, len(refs))
	errs := make([]error, len(refs))
	var g errgroup.Group
	g.SetLimit(limit)
	for i, ref := range refs {
		g.Go(func() error {
			images[i], errs[i] = resolve(ctx, src, ref, sel)
			return nil
		})
	}
	g.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return images, nil
}

// LayoutReach returns what an image layout holds (oci:DIR, or an
// oci-archive:FILE, split or not) that its index.json reaches: the
// manifests and indexes it holds, and the config and layer blobs they list
// that it holds; for a differential bundle, also the blobs it leaves out,
// which a site that applied it holds. index.json entries are walked
// whatever their names (a layout of another tool counts too); platforms of
// an index the layout lacks reach nothing.
func LayoutReach(ctx context.Context, from Target, reg registryclient.Options) (*Reach, error) {
	s, err := openLayoutStore(from, reg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	return s.reach(ctx, true)
}

// reach walks the layout's index.json (see LayoutReach): the blobs it
// holds, and with withOmitted those its bundle file says it leaves out.
func (s *layoutSource) reach(ctx context.Context, withOmitted bool) (*Reach, error) {
	return s.reachEntries(ctx, s.entries, reachOptions{withOmitted: withOmitted})
}

// reachOptions say what a walk of a layout counts.
type reachOptions struct {
	// withOmitted counts the blobs a bundle leaves out as reached.
	withOmitted bool
	// referenced counts every config and layer blob a manifest the
	// layout holds names, present or not, with its descriptor's size:
	// what must not be removed (prune), rather than what can be read.
	referenced bool
}

// reachEntries walks entries (index.json's, or some of them).
func (s *layoutSource) reachEntries(ctx context.Context, entries []v1.Descriptor, o reachOptions) (*Reach, error) {
	withOmitted := o.withOmitted
	r := NewReach()
	omitted := map[v1.Hash]OmittedBlob{}
	if s.bundle != nil && withOmitted {
		for _, o := range s.bundle.Omitted {
			d, _ := v1.NewHash(o.Digest) // checked when the bundle was read
			omitted[d] = o
		}
	}
	var visit func(d v1.Descriptor, image string, depth int) error
	visit = func(d v1.Descriptor, image string, depth int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.Has(d.Digest) {
			return nil
		}
		if err := checkDigest(d); err != nil {
			return err
		}
		if !d.MediaType.IsIndex() && !d.MediaType.IsImage() {
			if o.referenced {
				r.add(Reached{Digest: d.Digest, Size: d.Size, Image: image})
				return nil
			}
			rc, size, err := s.store.open(d.Digest)
			if err == nil {
				rc.Close()
				if size == d.Size {
					r.add(Reached{Digest: d.Digest, Size: size, Image: image})
				}
				return nil
			}
			if !errors.Is(err, errMissing) {
				return fmt.Errorf("%s: %w", s.desc, err)
			}
			if o, ok := omitted[d.Digest]; ok && o.Size == d.Size {
				r.add(Reached{Digest: d.Digest, Size: d.Size, Image: image})
			}
			return nil
		}
		if depth > maxIndexDepth {
			return fmt.Errorf("%s: %w: indexes nested deeper than %d", s.desc, ErrUnsupported, maxIndexDepth)
		}
		m, err := s.manifest(d)
		if errors.Is(err, errMissing) {
			return nil // a platform the layout does not hold
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.desc, err)
		}
		r.add(Reached{Digest: d.Digest, Size: d.Size, Manifest: true, Image: image})
		if d.MediaType.IsIndex() {
			idx, err := v1.ParseIndexManifest(bytes.NewReader(m.Data))
			if err != nil {
				return fmt.Errorf("%s: parsing index %s: %w", s.desc, d.Digest, err)
			}
			for _, c := range idx.Manifests {
				if err := visit(c, image, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		mf, err := v1.ParseManifest(bytes.NewReader(m.Data))
		if err != nil {
			return fmt.Errorf("%s: parsing manifest %s: %w", s.desc, d.Digest, err)
		}
		if err := visit(mf.Config, image, depth+1); err != nil {
			return err
		}
		for _, l := range mf.Layers {
			if !l.MediaType.IsDistributable() || len(l.URLs) > 0 {
				continue
			}
			if err := visit(l, image, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	for i, d := range entries {
		image := d.Annotations[AnnotationRefName]
		if image == "" {
			image = fmt.Sprintf("%s entry %d", indexFile, i+1)
		}
		if err := visit(d, image, 0); err != nil {
			return nil, err
		}
	}
	return r, nil
}
