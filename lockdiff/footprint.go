package lockdiff

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/microshift-compose/microshift-compose/internal/sizes"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
)

// FootprintChange compares the footprint sections of two locks (written by
// `build --resolve-sizes`, plan.Footprint): the components by name, the
// bytes shared between components and the total.
type FootprintChange struct {
	// Components are the components with images on either side: the old
	// side's in apply order, then those only the new side has.
	Components []SizeChange `json:"components"`
	// SharedBetweenComponents is the bytes of blobs that images of more
	// than one component use, counted once.
	SharedBetweenComponents ByteChange `json:"shared_between_components"`
	Total                   SizeChange `json:"total"`
}

// Sizes are the compressed and unique bytes of a component or the total,
// as plan.ComponentFootprint and plan.FootprintTotal define them.
type Sizes struct {
	Compressed int64 `json:"compressed"`
	Unique     int64 `json:"unique"`
}

// SizeChange is the sizes of a component (or the total) on both sides; a
// side without the component has nil.
type SizeChange struct {
	Name string `json:"name,omitempty"`
	Old  *Sizes `json:"old"`
	New  *Sizes `json:"new"`
}

// ByteChange is a byte count on both sides.
type ByteChange struct {
	Old int64 `json:"old"`
	New int64 `json:"new"`
}

func (f *FootprintChange) changed() bool {
	if f.SharedBetweenComponents.Old != f.SharedBetweenComponents.New || !sameSizes(f.Total.Old, f.Total.New) {
		return true
	}
	for _, c := range f.Components {
		if !sameSizes(c.Old, c.New) {
			return true
		}
	}
	return false
}

func sameSizes(a, b *Sizes) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// checkFootprint refuses a lock's footprint section whose byte counts no
// build could have written: negative, or over the bound of any sum of
// sizes (internal/sizes), so that the differences diff prints are true
// and cannot overflow.
func checkFootprint(l *Lock) error {
	f := l.Plan.Footprint
	if f == nil {
		return nil
	}
	check := func(what string, n int64) error {
		return sizes.Check(fmt.Sprintf("%s: footprint: %s", l.Path, what), n, sizes.MaxTotal)
	}
	for _, im := range f.Images {
		if err := check(fmt.Sprintf("image %s: compressed", text.Escape(im.Ref)), im.Compressed); err != nil {
			return err
		}
	}
	for _, c := range f.Components {
		for _, v := range []struct {
			field string
			n     int64
		}{{"compressed", c.Compressed}, {"unique", c.Unique}} {
			if err := check(fmt.Sprintf("component %s: %s", text.Escape(c.Name), v.field), v.n); err != nil {
				return err
			}
		}
	}
	for _, v := range []struct {
		field string
		n     int64
	}{{"shared_between_components", f.SharedBetweenComponents}, {"total: compressed", f.Total.Compressed}, {"total: unique", f.Total.Unique}} {
		if err := check(v.field, v.n); err != nil {
			return err
		}
	}
	return nil
}

// compareFootprints compares the footprint sections of two locks; when
// only one side has one, it returns nil and a note saying so.
func compareFootprints(a, b *Lock) (*FootprintChange, []string) {
	fa, fb := a.Plan.Footprint, b.Plan.Footprint
	if fa == nil || fb == nil {
		if fa == nil && fb == nil {
			return nil, nil
		}
		only := a.Path
		if fb != nil {
			only = b.Path
		}
		return nil, []string{fmt.Sprintf("only %s has a footprint section (build --resolve-sizes); footprint not compared", only)}
	}
	fc := &FootprintChange{
		Components:              []SizeChange{},
		SharedBetweenComponents: ByteChange{fa.SharedBetweenComponents, fb.SharedBetweenComponents},
		Total: SizeChange{
			Old: &Sizes{fa.Total.Compressed, fa.Total.Unique},
			New: &Sizes{fb.Total.Compressed, fb.Total.Unique},
		},
	}
	find := func(list []plan.ComponentFootprint, name string) *Sizes {
		i := slices.IndexFunc(list, func(c plan.ComponentFootprint) bool { return c.Name == name })
		if i < 0 {
			return nil
		}
		return &Sizes{list[i].Compressed, list[i].Unique}
	}
	for _, c := range fa.Components {
		fc.Components = append(fc.Components, SizeChange{Name: c.Name, Old: find(fa.Components, c.Name), New: find(fb.Components, c.Name)})
	}
	for _, c := range fb.Components {
		if find(fa.Components, c.Name) == nil {
			fc.Components = append(fc.Components, SizeChange{Name: c.Name, New: find(fb.Components, c.Name)})
		}
	}
	return fc, nil
}

func (f *FootprintChange) markdown(b *bytes.Buffer) {
	b.WriteString("\n#### Footprint\n\n| | compressed | unique |\n| --- | --- | --- |\n")
	row := func(label string, o, n *Sizes) {
		fmt.Fprintf(b, "| %s | %s | %s |\n", label,
			sizeChange(o, n, func(s Sizes) int64 { return s.Compressed }),
			sizeChange(o, n, func(s Sizes) int64 { return s.Unique }))
	}
	for _, c := range f.Components {
		row(text.MarkdownText(c.Name), c.Old, c.New)
	}
	fmt.Fprintf(b, "| shared between components | | %s |\n", byteChange(f.SharedBetweenComponents.Old, f.SharedBetweenComponents.New))
	row("**total**", f.Total.Old, f.Total.New)
	b.WriteString("\nUnique: a component's bytes no other component uses (what leaving it out saves); the total counts each blob once (what the device stores).\n")
}

// sizeChange prints one size on both sides and the difference.
func sizeChange(o, n *Sizes, field func(Sizes) int64) string {
	switch {
	case o == nil && n == nil:
		return "—"
	case o == nil:
		return "(none) → " + human(field(*n))
	case n == nil:
		return human(field(*o)) + " → (none)"
	}
	return byteChange(field(*o), field(*n))
}

// byteChange prints a byte count on both sides and the difference.
func byteChange(ov, nv int64) string {
	if ov == nv {
		return human(nv)
	}
	sign := "+"
	delta := nv - ov
	if delta < 0 {
		sign, delta = "−", -delta
	}
	return fmt.Sprintf("%s → %s (%s%s)", human(ov), human(nv), sign, human(delta))
}

// human prints a byte count in IEC units.
func human(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
