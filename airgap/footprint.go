package airgap

import (
	"context"
	"fmt"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/internal/sizes"
	"github.com/microshift-compose/microshift-compose/plan"
)

// Footprint reads the manifests of the plan's images for its arch (no
// blobs) and computes what each component and the whole plan cost. Shared
// blobs are attributed this way: a blob counts in the Compressed bytes of
// every component whose images use it, in the Unique bytes of a component
// only when no other component uses it, and once in the total.
func Footprint(ctx context.Context, p *plan.Plan, opts Options) (*plan.Footprint, error) {
	reg, err := newRegistrySource(ctx, opts.Registry)
	if err != nil {
		return nil, err
	}
	// The filtered operator catalog, built by build, is measured where
	// it is: the plan's files before build writes them, the output's
	// layout after.
	r, err := withBuilt(reg, opts.Built, p, opts.Registry)
	if err != nil {
		return nil, err
	}
	defer r.close()
	images := make([]*image, len(p.Images))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobs(opts))
	for i, pim := range p.Images {
		g.Go(func() error {
			var err error
			images[i], err = resolve(gctx, r, pim.Ref, selection{arch: opts.Arch})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return footprintOf(p, images)
}

// footprintOf adds up the sizes the registries state, each checked and
// every sum checked (internal/sizes): a size out of range, or sums past
// sizes.MaxTotal, are an error naming the image and blob.
func footprintOf(p *plan.Plan, images []*image) (*plan.Footprint, error) {
	var sum sizes.Sum
	fp := &plan.Footprint{Images: []plan.ImageFootprint{}, Components: []plan.ComponentFootprint{}}
	size := map[v1.Hash]int64{}
	users := map[v1.Hash]map[string]bool{} // blob -> components
	compBlobs := map[string]map[v1.Hash]bool{}
	compImages := map[string]int{}
	for i, pim := range p.Images {
		im := images[i]
		var bytes int64
		for _, b := range im.Blobs {
			what := fmt.Sprintf("%s: blob %s", pim.Ref, b.Digest)
			if sum.Blob(what, b.Size) {
				// The total passes the bound first: it sums every size.
				sum.Add(&fp.Total.Compressed, what+": with it the images", b.Size)
				sum.Add(&bytes, what, b.Size)
			}
		}
		fp.Images = append(fp.Images, plan.ImageFootprint{Ref: pim.Ref, Manifest: im.Platform.String(), Blobs: len(im.Blobs), Compressed: bytes})
		var comps []string
		for _, u := range pim.Uses {
			if !slices.Contains(comps, u.Component) {
				comps = append(comps, u.Component)
			}
		}
		for _, c := range comps {
			compImages[c]++
			if compBlobs[c] == nil {
				compBlobs[c] = map[v1.Hash]bool{}
			}
		}
		for _, b := range im.Blobs {
			size[b.Digest] = b.Size
			if users[b.Digest] == nil {
				users[b.Digest] = map[string]bool{}
			}
			for _, c := range comps {
				users[b.Digest][c] = true
				compBlobs[c][b.Digest] = true
			}
		}
	}
	fp.Total.Images = len(p.Images)
	fp.Total.Blobs = len(size)
	if err := sum.Err(); err != nil {
		return nil, err
	}
	// Each of the sums below is a part of the total checked above.
	for d, n := range size {
		sum.Add(&fp.Total.Unique, "the distinct blobs", n)
		if len(users[d]) > 1 {
			sum.Add(&fp.SharedBetweenComponents, "the shared blobs", n)
		}
	}
	for _, c := range p.Components {
		blobs := compBlobs[c.Name]
		if blobs == nil {
			continue
		}
		cf := plan.ComponentFootprint{Name: c.Name, Images: compImages[c.Name]}
		for d := range blobs {
			sum.Add(&cf.Compressed, "component "+c.Name, size[d])
			if len(users[d]) == 1 {
				sum.Add(&cf.Unique, "component "+c.Name, size[d])
			}
		}
		fp.Components = append(fp.Components, cf)
	}
	if err := sum.Err(); err != nil {
		return nil, err
	}
	return fp, nil
}
