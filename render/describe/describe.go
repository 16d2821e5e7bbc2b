package describe

import (
	"cmp"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
)

// Plan writes a plan for people: the components in apply order and why
// each is there; with explain, also every image and config value and where
// it comes from.
func Plan(w io.Writer, p *plan.Plan, explain bool) error {
	fmt.Fprintf(w, "release %s (%s, base %s), arch %s, profile %s\n", p.Release.Stream, p.Release.Source, p.Release.Base, p.Arch, p.Profile)
	fmt.Fprintln(w, "\ncomponents, in apply order:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range p.Components {
		reasons := make([]string, len(c.Reasons))
		for i, r := range c.Reasons {
			reasons[i] = r.String()
		}
		fmt.Fprintf(tw, "  %03d-%s\t%s\n", c.Order, c.Name, strings.Join(reasons, "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(p.Capabilities) > 0 {
		fmt.Fprintln(w, "\ncapabilities:")
		caps := make([]string, 0, len(p.Capabilities))
		for c := range p.Capabilities {
			caps = append(caps, c)
		}
		sort.Strings(caps)
		for _, c := range caps {
			fmt.Fprintf(w, "  %s: %s\n", c, p.Capabilities[c])
		}
	}
	if ops := p.Operators; ops != nil {
		fmt.Fprintf(w, "\noperators, from %s (filtered into %s):\n", ops.Catalog.Ref, ops.Filtered.Ref)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, o := range ops.Packages {
			why := "--operator"
			if !o.Subscribed() {
				why = "required by " + o.RequiredBy
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\tnamespace %s\t%s\n", o.Name, o.Bundle, o.Channel, o.Namespace, why)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if !explain {
		tagOnly := ""
		if n := countTagOnly(p); n > 0 {
			tagOnly = fmt.Sprintf(" (%d tag-only, not pinned by digest)", n)
		}
		fmt.Fprintf(w, "\n%d images%s, %d packages, %d device files (--explain for details)\n", len(p.Images), tagOnly, len(p.Packages), len(p.Files))
		for _, n := range p.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
		return writeWarnings(w, p)
	}
	fmt.Fprintf(w, "\nimages (%d):\n", len(p.Images))
	for _, im := range p.Images {
		uses := make([]string, len(im.Uses))
		for i, u := range im.Uses {
			uses[i] = fmt.Sprintf("%s (%s %s)", u.Component, u.File, u.Key)
		}
		pin := ""
		if !im.Pinned {
			pin = " [NOT PINNED]"
		}
		fmt.Fprintf(w, "  %s%s\n      needed by %s\n", im.Ref, pin, strings.Join(uses, ", "))
	}
	fmt.Fprintf(w, "\npackages (%d):\n", len(p.Packages))
	for _, pkg := range p.Packages {
		v := pkg.Version
		if v == "" {
			v = "any version"
		}
		fmt.Fprintf(w, "  %s %s (%s)\n", pkg.Name, v, strings.Join(pkg.Components, ", "))
	}
	fmt.Fprintf(w, "\nMicroShift config %s:\n", cmp.Or(p.ConfigFile, "(none written)"))
	if len(p.ConfigSources) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, s := range p.ConfigSources {
		fmt.Fprintf(w, "  %s: %s (%s)\n", s.Path, text.ConfigValue(s.Value), s.Source)
	}
	fmt.Fprintf(w, "\ndevice files (%d):\n", len(p.Files))
	for _, f := range p.Files {
		from := f.Component
		if f.Source != "" {
			from = f.Source
		} else if from == "" {
			from = "plan"
		}
		fmt.Fprintf(w, "  %s %s (%s, %d bytes)\n", f.Mode, f.Path, from, f.Size)
	}
	if len(p.Manifests) > 0 {
		fmt.Fprintf(w, "\nmanifests (%d):\n", len(p.Manifests))
		for _, m := range p.Manifests {
			fmt.Fprintf(w, "  %s (%s, from %s): %d resources, %d images\n", m.Dir, m.Component, m.From, len(m.Resources), len(m.Images))
			for _, res := range m.Resources {
				fmt.Fprintf(w, "      %s\n", res)
			}
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "\nnote: %s\n", n)
	}
	return writeWarnings(w, p)
}

func countTagOnly(p *plan.Plan) int {
	n := 0
	for _, im := range p.Images {
		if !im.Pinned {
			n++
		}
	}
	return n
}

func writeWarnings(w io.Writer, p *plan.Plan) error {
	for _, warn := range p.Warnings {
		if _, err := fmt.Fprintf(w, "warning: %s\n", warn); err != nil {
			return err
		}
	}
	return nil
}
