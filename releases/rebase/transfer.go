package rebase

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/microshift-compose/microshift-compose/internal/transfer"
	"github.com/microshift-compose/microshift-compose/releases"
)

// ContentReader reads what the images refs are made of for arch (their
// manifests and blobs, keyed by reference); the caller reads them from
// registries or layouts (airgap.ReadImageContents).
type ContentReader func(refs []string, arch releases.Arch) (map[string]transfer.Image, error)

// AddTransfer adds to the diff, for each arch, what going from the old
// release's images to the new release's moves across an air gap: the
// blobs and manifests the new images reach that the old ones do not, per
// component. An arch the new release has no files for is skipped.
func (d *ReleaseDiff) AddTransfer(oldRel, newRel *releases.Release, arches []releases.Arch, read ContentReader) error {
	for _, a := range arches {
		cur, comps := releaseImages(newRel, a)
		if len(cur) == 0 {
			continue
		}
		old, _ := releaseImages(oldRel, a)
		for _, side := range []*[]transfer.Image{&old, &cur} {
			refs := make([]string, len(*side))
			for i, im := range *side {
				refs[i] = im.Ref
			}
			contents, err := read(refs, a)
			if err != nil {
				return err
			}
			for i, im := range *side {
				c := contents[im.Ref]
				(*side)[i].Manifests, (*side)[i].Blobs = c.Manifests, c.Blobs
			}
		}
		r, err := transfer.Compute(old, cur, comps)
		if err != nil {
			return fmt.Errorf("the %s images: %w", a, err)
		}
		r.Arch = string(a)
		d.Transfer = append(d.Transfer, r)
	}
	return nil
}

// releaseImages lists the images of a release's files for arch, each once
// with the components whose files name it, and the components in diff
// order (core first).
func releaseImages(r *releases.Release, arch releases.Arch) ([]transfer.Image, []string) {
	var files []*releases.File
	for _, f := range r.Files() {
		if f.Arch == arch {
			files = append(files, f)
		}
	}
	slices.SortFunc(files, func(a, b *releases.File) int { return compareComponents(ComponentName(a), ComponentName(b)) })
	var out []transfer.Image
	var comps []string
	at := map[string]int{}
	for _, f := range files {
		c := ComponentName(f)
		if !slices.Contains(comps, c) {
			comps = append(comps, c)
		}
		for _, im := range f.Images {
			i, ok := at[im.Ref]
			if !ok {
				i = len(out)
				at[im.Ref] = i
				out = append(out, transfer.Image{Ref: im.Ref})
			}
			if !slices.Contains(out[i].Components, c) {
				out[i].Components = append(out[i].Components, c)
			}
		}
	}
	return out, comps
}

func (d *ReleaseDiff) transferMarkdown(b *bytes.Buffer) {
	for _, r := range d.Transfer {
		r.Markdown(b)
	}
}
