package lockdiff

import (
	"slices"

	"github.com/microshift-compose/microshift-compose/internal/transfer"
	"github.com/microshift-compose/microshift-compose/plan"
)

// ContentReader reads what the images refs are made of for arch (their
// manifests and blobs, keyed by reference); the caller reads them from
// registries or layouts (airgap.ReadImageContents).
type ContentReader func(refs []string, arch string) (map[string]transfer.Image, error)

// AddTransfer adds to the diff what going from the old lock's images to
// the new lock's moves across an air gap: the blobs and manifests the new
// images reach that the old ones do not, per component of the new lock.
func (d *Diff) AddTransfer(a, b *Lock, read ContentReader) error {
	old, err := sideImages(a.Plan, read)
	if err != nil {
		return err
	}
	cur, err := sideImages(b.Plan, read)
	if err != nil {
		return err
	}
	r, err := transfer.Compute(old, cur, b.Plan.ComponentNames())
	if err != nil {
		return err
	}
	d.Transfer = r
	return nil
}

// sideImages reads a plan's images and names the components that use each.
func sideImages(p *plan.Plan, read ContentReader) ([]transfer.Image, error) {
	contents, err := read(p.ImageRefs(), p.Arch)
	if err != nil {
		return nil, err
	}
	out := make([]transfer.Image, 0, len(p.Images))
	for _, pim := range p.Images {
		im := contents[pim.Ref]
		im.Ref = pim.Ref
		im.Components = nil
		for _, u := range pim.Uses {
			if !slices.Contains(im.Components, u.Component) {
				im.Components = append(im.Components, u.Component)
			}
		}
		out = append(out, im)
	}
	return out, nil
}
