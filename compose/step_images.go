package compose

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// addImages looks every selected component's image keys up in the release
// file for the plan's arch. A tag reference release fetch resolved to a
// digest (when the registry answered) is embedded by that digest and named
// by its tag.
func addImages(_ context.Context, in *inputs, p soFar) (soFar, error) {
	files := &releaseFileIndex{in: in}
	byRef := map[string]*plan.Image{}
	type tagOnly struct{ where, ref string }
	var unpinned []tagOnly
	for _, pc := range p.Components {
		n := pc.Name
		c := in.cat.Components[n]
		for _, set := range c.ImageSets() {
			f := in.rel.File(set.File, in.req.Arch)
			if f == nil {
				from := ""
				if set.From != "" {
					from = "; it comes with " + set.From + ": add it to the release directory (--release-dir) or the component's release/ directory (--catalog)"
				}
				return p, fmt.Errorf("release %s has no %s, which component %q takes its images from%s",
					in.rel, releases.FileName(set.File, in.req.Arch), n, from)
			}
			if err := files.checkClaimed(f); err != nil {
				return p, err
			}
			index := files.keyIndex(f)
			for _, k := range set.Keys {
				ref, ok := index[k]
				if !ok {
					return p, fmt.Errorf("release %s: %s has no image key %q that component %q needs", in.rel, f.Name, k, n)
				}
				tag := ""
				if pinned, ok := in.rel.Resolved[ref]; ok {
					tag, ref = ref, pinned
				}
				im := byRef[ref]
				if im == nil {
					// The release parser has checked every reference, and a
					// valid reference holds "@" only before its digest: no
					// second parse per image.
					im = &plan.Image{Ref: ref, Pinned: strings.Contains(ref, "@"), Tag: tag}
					byRef[ref] = im
					if !im.Pinned {
						unpinned = append(unpinned, tagOnly{fmt.Sprintf("component %q image %q (%s)", n, k, f.Name), ref})
					}
				}
				im.Uses = append(im.Uses, plan.ImageUse{Component: n, File: f.Name, Key: k})
			}
		}
	}
	for _, ref := range slices.Sorted(maps.Keys(byRef)) {
		if im := byRef[ref]; im.Tag != "" {
			p.Notes = append(p.Notes, fmt.Sprintf("%s is pinned to %s, the digest release fetch resolved the tag to; the device names it by the tag too, which its manifests pull", im.Tag, im.Ref))
		}
	}
	if len(unpinned) > 0 {
		if !in.req.AllowUnpinned {
			more, them := "", "it"
			if len(unpinned) > 1 {
				more, them = fmt.Sprintf(" (and %d more tag-only images)", len(unpinned)-1), "them"
			}
			return p, fmt.Errorf("%s: %w: %s%s; pin %s in the release file, or pass --allow-unpinned to embed %s by tag",
				unpinned[0].where, ErrUnpinned, unpinned[0].ref, more, them, them)
		}
		for _, u := range unpinned {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s is not pinned by digest: %s (allowed by --allow-unpinned; the device may not boot offline reproducibly)", u.where, u.ref))
		}
	}
	for _, ref := range slices.Sorted(maps.Keys(byRef)) {
		p.Images = append(p.Images, *byRef[ref])
	}
	noted := map[string]bool{}
	for _, pc := range p.Components {
		n := pc.Name
		for _, set := range in.cat.Components[n].ImageSets() {
			name := releases.FileName(set.File, in.req.Arch)
			if from, ok := in.ownFiles[name]; ok && !noted[name] {
				noted[name] = true
				p.Notes = append(p.Notes, fmt.Sprintf("%s comes from component %s: release %s does not ship it", name, from, in.rel))
			}
		}
	}
	return p, nil
}

// releaseFileIndex indexes the release files the images step reads, each
// once: claimed holds, per release file component, the keys the catalog
// claims; checked the files already checked; keys each file's references
// by key.
type releaseFileIndex struct {
	in      *inputs
	claimed map[string]map[string]bool
	checked map[string]bool
	keys    map[string]map[string]string // release file -> key -> reference
}

// keyIndex maps a release file's keys to their references, built once per
// file: components look their keys up in it.
func (r *releaseFileIndex) keyIndex(f *releases.File) map[string]string {
	if r.keys == nil {
		r.keys = map[string]map[string]string{}
	}
	index, ok := r.keys[f.Name]
	if !ok {
		index = make(map[string]string, len(f.Images))
		for _, im := range f.Images {
			index[im.Key] = im.Ref
		}
		r.keys[f.Name] = index
	}
	return index
}

// checkClaimed refuses a release file with keys no catalog component claims:
// those are images the device would boot without. The claims of every
// release file are indexed once, on the first file checked.
func (r *releaseFileIndex) checkClaimed(f *releases.File) error {
	if r.claimed == nil {
		r.claimed = map[string]map[string]bool{}
		for _, c := range r.in.cat.Components {
			if !c.SupportsRelease(r.in.rel) {
				continue
			}
			for _, set := range c.ImageSets() {
				keys := r.claimed[set.File]
				if keys == nil {
					keys = map[string]bool{}
					r.claimed[set.File] = keys
				}
				for _, k := range set.Keys {
					keys[k] = true
				}
			}
		}
		r.checked = map[string]bool{}
	}
	if r.checked[f.Name] {
		return nil
	}
	r.checked[f.Name] = true
	for _, im := range f.Images {
		if !r.claimed[f.Component][im.Key] {
			return fmt.Errorf("release %s: %s: image key %q is not claimed by any component, so no plan would embed it; add it to a component's images.keys (see --catalog)",
				r.in.rel, f.Name, im.Key)
		}
	}
	return nil
}
