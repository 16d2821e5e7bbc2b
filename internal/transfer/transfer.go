package transfer

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/microshift-compose/microshift-compose/internal/sizes"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// Blob is a manifest, config or layer blob: its digest and size.
type Blob struct {
	Digest string
	Size   int64
}

// Image is one image of a side, as read for the side's arch.
type Image struct {
	Ref string
	// Components are the components whose images include it ("" for none).
	Components []string
	// Manifests are the manifests a copy of it stores (an index and the
	// arch's manifest, or the manifest).
	Manifests []Blob
	// Blobs are its config and layer blobs.
	Blobs []Blob
}

// Report is what going from the old images to the new ones moves.
type Report struct {
	// Arch is set when a diff covers several arches (release diff).
	Arch string `json:"arch,omitempty"`
	// Components are the new side's components, in its order: for each,
	// its images the old side does not have and the new blobs that only
	// its images reach.
	Components []Component `json:"components"`
	// SharedBetweenComponents are the new blobs that images of more than
	// one component reach, counted once.
	SharedBetweenComponents Bytes `json:"shared_between_components"`
	// Manifests are the new side's manifests the old side does not have.
	Manifests Bytes `json:"manifests"`
	// Total is what the update moves: every new blob and manifest once
	// (the components' blobs, the shared ones and the manifests).
	Total Bytes `json:"total"`
	// Full is every blob and manifest of the new side once: what a full
	// bundle moves.
	Full Bytes `json:"full"`
	// NewImages counts the new side's images the old side does not have.
	NewImages int `json:"new_images"`
}

// Component is what one component's images add.
type Component struct {
	Name string `json:"name"`
	// NewImages counts its images the old side does not have.
	NewImages int   `json:"new_images"`
	Blobs     int   `json:"blobs"`
	Bytes     int64 `json:"bytes"`
}

// Bytes is a number of blobs and their bytes.
type Bytes struct {
	Count int   `json:"count"`
	Bytes int64 `json:"bytes"`
}

// Compute compares the images of the old side with the new side's.
// components gives the new side's component order; a component not in
// it comes after, by name. The sizes are the sources' (a registry's
// descriptors, a layout's): one out of range (internal/sizes), or sums
// past sizes.MaxTotal, are an error naming the image and blob.
func Compute(old, new []Image, components []string) (*Report, error) {
	var sum sizes.Sum
	check := func(im Image, what string, b Blob) {
		sum.Blob(fmt.Sprintf("%s: %s %s", im.Ref, what, b.Digest), b.Size)
	}
	had := map[string]bool{}
	oldRefs := map[string]bool{}
	for _, im := range old {
		oldRefs[im.Ref] = true
		for _, b := range im.Manifests {
			check(im, "manifest", b)
			had[b.Digest] = true
		}
		for _, b := range im.Blobs {
			check(im, "blob", b)
			had[b.Digest] = true
		}
	}
	r := &Report{Components: []Component{}}
	add := func(to *Bytes, what string, size int64) {
		to.Count++
		sum.Add(&to.Bytes, what, size)
	}
	size := map[string]int64{}
	users := map[string]map[string]bool{} // new blob -> components
	newImages := map[string]int{}
	seenManifest := map[string]bool{}
	counted := map[string]bool{}
	order := slices.Clone(components)
	for _, im := range new {
		comps := im.Components
		if len(comps) == 0 {
			comps = []string{""}
		}
		if !oldRefs[im.Ref] && !counted[im.Ref] {
			counted[im.Ref] = true
			r.NewImages++
		}
		for _, c := range comps {
			if !slices.Contains(order, c) {
				order = append(order, c)
			}
			if !oldRefs[im.Ref] {
				newImages[c]++
			}
		}
		for _, m := range im.Manifests {
			check(im, "manifest", m)
			if seenManifest[m.Digest] {
				continue
			}
			seenManifest[m.Digest] = true
			// Full sums every size, so it passes the bound first (the
			// other sums are parts of it): the error names the image.
			add(&r.Full, im.Ref+": manifest "+m.Digest+": with it a full bundle", m.Size)
			if !had[m.Digest] {
				add(&r.Manifests, "the new manifests", m.Size)
			}
		}
		for _, b := range im.Blobs {
			check(im, "blob", b)
			if _, ok := size[b.Digest]; !ok {
				size[b.Digest] = b.Size
				add(&r.Full, im.Ref+": blob "+b.Digest+": with it a full bundle", b.Size)
			}
			if had[b.Digest] {
				continue
			}
			if users[b.Digest] == nil {
				users[b.Digest] = map[string]bool{}
			}
			for _, c := range comps {
				users[b.Digest][c] = true
			}
		}
	}
	if err := sum.Err(); err != nil {
		return nil, err
	}
	byComp := map[string]*Component{}
	for d, us := range users {
		add(&r.Total, "the update", size[d])
		if len(us) > 1 {
			add(&r.SharedBetweenComponents, "the shared blobs", size[d])
			continue
		}
		for c := range us {
			if byComp[c] == nil {
				byComp[c] = &Component{Name: c}
			}
			byComp[c].Blobs++
			sum.Add(&byComp[c].Bytes, "component "+c, size[d])
		}
	}
	r.Total.Count += r.Manifests.Count
	sum.Add(&r.Total.Bytes, "the update", r.Manifests.Bytes)
	if err := sum.Err(); err != nil {
		return nil, err
	}
	// The components in the new side's order, then those it does not
	// list by name; each once.
	known := len(components)
	slices.Sort(order[known:])
	for _, c := range slices.Compact(order) {
		cc := Component{Name: c, NewImages: newImages[c]}
		if b := byComp[c]; b != nil {
			cc.Blobs, cc.Bytes = b.Blobs, b.Bytes
		}
		r.Components = append(r.Components, cc)
	}
	return r, nil
}

// Markdown writes the report as a section of a diff: a table of the
// components whose images changed, the shared blobs, the manifests and the
// total, and the share of a full bundle that is.
func (r *Report) Markdown(b *bytes.Buffer) {
	title := "Update transfer"
	if r.Arch != "" {
		title += " (" + r.Arch + ")"
	}
	fmt.Fprintf(b, "\n#### %s\n\nWhat the update moves to a site that holds the old images: the blobs and manifests the new images reach that the old ones do not.\n\n", title)
	if r.Total.Count == 0 {
		b.WriteString("Nothing: the old images hold every blob and manifest of the new ones.\n")
		return
	}
	b.WriteString("| component | new images | new blobs | bytes |\n| --- | --- | --- | --- |\n")
	same := 0
	for _, c := range r.Components {
		if c.NewImages == 0 && c.Blobs == 0 {
			same++
			continue
		}
		name := c.Name
		if name == "" {
			name = "(no component)"
		}
		fmt.Fprintf(b, "| %s | %d | %d | %s |\n", text.Cell(name), c.NewImages, c.Blobs, Human(c.Bytes))
	}
	fmt.Fprintf(b, "| shared between components | | %d | %s |\n", r.SharedBetweenComponents.Count, Human(r.SharedBetweenComponents.Bytes))
	fmt.Fprintf(b, "| manifests | | %d | %s |\n", r.Manifests.Count, Human(r.Manifests.Bytes))
	fmt.Fprintf(b, "| **total** | %d | %d | %s |\n", r.NewImages, r.Total.Count, Human(r.Total.Bytes))
	fmt.Fprintf(b, "\n%s of the %s a full bundle of the new images holds (%s).", Human(r.Total.Bytes), Human(r.Full.Bytes), percent(r.Total.Bytes, r.Full.Bytes))
	if same > 0 {
		fmt.Fprintf(b, " %d %s no new images.", same, text.Plural(same, "component has", "components have"))
	}
	b.WriteString(" A blob two components' new images share is counted once, under shared.\n")
}

func percent(part, whole int64) string {
	if whole == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

// Human prints a byte count in IEC units, as the rest of the diff does.
func Human(n int64) string { return sizes.Human(n) }
