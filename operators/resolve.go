package operators

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases"
)

// Selected is a bundle the device gets: one asked for (Choice set), or one
// a selected bundle requires.
type Selected struct {
	Package string
	// Channel is the channel the bundle was taken from: the one asked
	// for, the package's default, or, for a dependency, the first of its
	// channels with a bundle in the required range.
	Channel string
	Bundle  *Bundle
	// Choice is what was asked for; nil for a dependency.
	Choice *Choice
	// RequiredBy is the package whose bundle required this one, and
	// Requirement the property that did ("olm.package.required etcd
	// >=0.9.0", "olm.gvk.required etcd.database.coreos.com/v1beta2
	// EtcdCluster"); empty for a package asked for.
	RequiredBy  string
	Requirement string
}

// Set is what a resolution selected, by package name.
type Set struct {
	Selected []*Selected
	// Edges are the requirements between selected packages, each
	// satisfied by the bundle of To: OLM installs a dependency in its
	// dependent's namespace.
	Edges []Edge
	// Notes say what was decided for the user (a dependency's provider
	// picked among several).
	Notes []string
}

// Get returns the selected bundle of package n, or nil.
func (s *Set) Get(n string) *Selected {
	for _, sel := range s.Selected {
		if sel.Package == n {
			return sel
		}
	}
	return nil
}

// Edge is a selected bundle requiring another package's.
type Edge struct {
	From, To    string
	Requirement string
}

// ResolveOptions tune Resolve.
type ResolveOptions struct {
	// AllowUnpinned accepts bundle and related images named by tag.
	AllowUnpinned bool
}

// ErrUnpinned is wrapped by the error for a bundle or related image named
// by tag.
var ErrUnpinned = errors.New("image is not pinned by digest")

// ErrUnsatisfiable is wrapped by the errors for a choice or a requirement
// the catalog cannot satisfy.
var ErrUnsatisfiable = errors.New("cannot be satisfied from the catalog")

// Resolve picks a bundle for every choice (the channel's head, or the
// newest bundle in its range), then closes the selection over the
// selected bundles' olm.package.required and olm.gvk.required: a package
// already selected must satisfy what is required of it, another is
// selected from its default channel first. Every bundle and related image
// must be pinned by digest unless opts.AllowUnpinned. What cannot be
// satisfied is refused with the chain of packages that needs it.
func Resolve(m *Model, choices []Choice, opts ResolveOptions) (*Set, error) {
	s := &Set{}
	var queue []*Selected
	for i := range choices {
		c := choices[i]
		if prev := s.Get(c.Package); prev != nil {
			return nil, fmt.Errorf("--operator %s and --operator %s ask for package %s twice: give each package once", prev.Choice, c, text.QuoteExcerpt(c.Package))
		}
		sel, err := choose(m, c)
		if err != nil {
			return nil, err
		}
		s.Selected = append(s.Selected, sel)
		queue = append(queue, sel)
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		b := cur.Bundle
		for _, r := range b.RequiresPackages {
			added, err := s.requirePackage(m, cur, r)
			if err != nil {
				return nil, err
			}
			if added != nil {
				queue = append(queue, added)
			}
		}
		for _, g := range b.RequiresGVKs {
			added, err := s.requireGVK(m, cur, g)
			if err != nil {
				return nil, err
			}
			if added != nil {
				queue = append(queue, added)
			}
		}
	}
	sort.Slice(s.Selected, func(i, j int) bool { return s.Selected[i].Package < s.Selected[j].Package })
	if err := s.checkImages(opts); err != nil {
		return nil, err
	}
	return s, nil
}

// choose resolves one choice to a bundle.
func choose(m *Model, c Choice) (*Selected, error) {
	p := m.Packages[c.Package]
	if p == nil {
		names := slices.Sorted(maps.Keys(m.Packages))
		if near := suggest.Closest(c.Package, names); near != "" {
			return nil, fmt.Errorf("--operator %s: the catalog has no package %s; did you mean %q?", c, text.QuoteExcerpt(c.Package), near)
		}
		return nil, fmt.Errorf("--operator %s: the catalog has no package %s (it has %d packages: %s)", c, text.QuoteExcerpt(c.Package), len(names), listSome(names, 8))
	}
	ch := c.Channel
	if ch == "" {
		ch = p.DefaultChannel
		if ch == "" {
			return nil, fmt.Errorf("--operator %s: package %s has no default channel: name one (%s:CHANNEL; it has %s)", c, text.QuoteExcerpt(p.Name), p.Name, listSome(p.channelNames(), 8))
		}
	}
	channel := p.Channels[ch]
	if channel == nil {
		names := p.channelNames()
		what := "channel"
		if c.Channel == "" {
			what = "default channel"
		}
		if near := suggest.Closest(ch, names); near != "" {
			return nil, fmt.Errorf("--operator %s: package %s has no %s %s; did you mean %q?", c, text.QuoteExcerpt(p.Name), what, text.QuoteExcerpt(ch), near)
		}
		return nil, fmt.Errorf("--operator %s: package %s has no %s %s (it has %s)", c, text.QuoteExcerpt(p.Name), what, text.QuoteExcerpt(ch), listSome(names, 8))
	}
	var rng *Range
	if c.Versions != "" {
		r, err := ParseRange(c.Versions)
		if err != nil {
			return nil, fmt.Errorf("--operator %s: %w", c, err)
		}
		rng = &r
	}
	b, err := p.pick(channel, rng)
	if err != nil {
		return nil, fmt.Errorf("--operator %s: %w", c, err)
	}
	cc := c
	return &Selected{Package: p.Name, Channel: channel.Name, Bundle: b, Choice: &cc}, nil
}

// channelNames lists a package's channels, sorted.
func (p *Package) channelNames() []string { return slices.Sorted(maps.Keys(p.Channels)) }

// bundles are a channel's bundles, each checked to be defined.
func (p *Package) bundles(c *Channel) ([]*Bundle, error) {
	out := make([]*Bundle, 0, len(c.Entries))
	for _, e := range c.Entries {
		b := p.Bundles[e.Name]
		if b == nil {
			return nil, fmt.Errorf("%s: package %s channel %s lists bundle %s, which the catalog does not define", c.Where, text.QuoteExcerpt(p.Name), text.QuoteExcerpt(c.Name), text.QuoteExcerpt(e.Name))
		}
		out = append(out, b)
	}
	return out, nil
}

// Head is the channel's head: the one entry no other entry replaces or
// skips (opm's rule). None, or more than one, is an error.
func (c *Channel) Head() (string, error) {
	incoming := map[string]bool{}
	for _, e := range c.Entries {
		if e.Replaces != "" {
			incoming[e.Replaces] = true
		}
		for _, s := range e.Skips {
			incoming[s] = true
		}
	}
	var heads []string
	for _, e := range c.Entries {
		if !incoming[e.Name] {
			heads = append(heads, e.Name)
		}
	}
	sort.Strings(heads)
	switch {
	case len(c.Entries) == 0:
		return "", fmt.Errorf("%s: package %s channel %s has no bundles", c.Where, text.QuoteExcerpt(c.Package), text.QuoteExcerpt(c.Name))
	case len(heads) == 0:
		return "", fmt.Errorf("%s: package %s channel %s has no head: every bundle is replaced or skipped by another (a cycle)", c.Where, text.QuoteExcerpt(c.Package), text.QuoteExcerpt(c.Name))
	case len(heads) > 1:
		return "", fmt.Errorf("%s: package %s channel %s has %d heads (%s): no bundle replaces or skips the others, so OLM cannot tell which is newest", c.Where, text.QuoteExcerpt(c.Package), text.QuoteExcerpt(c.Name), len(heads), listSome(heads, 4))
	}
	return heads[0], nil
}

// pick is the channel's head, or with a range its newest bundle in it (by
// version, then name).
func (p *Package) pick(c *Channel, rng *Range) (*Bundle, error) {
	bundles, err := p.bundles(c)
	if err != nil {
		return nil, err
	}
	head, err := c.Head()
	if err != nil {
		return nil, err
	}
	if rng == nil {
		return p.Bundles[head], nil
	}
	var best *Bundle
	for _, b := range bundles {
		if rng.Contains(b.Version) && (best == nil || newer(b, best)) {
			best = b
		}
	}
	if best == nil {
		return nil, fmt.Errorf("package %s channel %s has no bundle in range %s (it has %s)", text.QuoteExcerpt(p.Name), text.QuoteExcerpt(c.Name), text.QuoteExcerpt(rng.String()), versionList(bundles))
	}
	return best, nil
}

// newer orders bundles by version, then name.
func newer(a, b *Bundle) bool {
	if c := a.Version.Compare(b.Version); c != 0 {
		return c > 0
	}
	return a.Name > b.Name
}

// versionList names the versions of bundles, oldest first, shortened.
func versionList(bs []*Bundle) string {
	sorted := slices.Clone(bs)
	sort.Slice(sorted, func(i, j int) bool { return newer(sorted[j], sorted[i]) })
	vs := make([]string, len(sorted))
	for i, b := range sorted {
		vs[i] = b.Version.String()
	}
	if len(vs) > 8 {
		return fmt.Sprintf("%d versions: %s ... %s", len(vs), strings.Join(vs[:4], ", "), strings.Join(vs[len(vs)-3:], ", "))
	}
	return "versions " + strings.Join(vs, ", ")
}

// chain says how a selected bundle got in: "etcd <- required by
// prometheus (olm.package.required etcd >=0.9.0) <- --operator
// prometheus".
func (s *Set) chain(sel *Selected) string {
	parts := []string{sel.Package}
	seen := map[string]bool{}
	for cur := sel; cur != nil && !seen[cur.Package]; cur = s.Get(cur.RequiredBy) {
		seen[cur.Package] = true
		if cur.Choice != nil {
			parts = append(parts, "--operator "+cur.Choice.String())
			break
		}
		parts = append(parts, fmt.Sprintf("required by %s (%s)", cur.RequiredBy, cur.Requirement))
	}
	return strings.Join(parts, " <- ")
}

// requirePackage satisfies an olm.package.required of cur's bundle: by
// the package's selected bundle, or by selecting one.
func (s *Set) requirePackage(m *Model, cur *Selected, r PackageRequirement) (*Selected, error) {
	what := fmt.Sprintf("olm.package.required %s %s", r.Package, r.Range)
	rng, err := ParseRange(r.Range)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", cur.Bundle.Where, what, err)
	}
	need := fmt.Sprintf("%s (%s) requires package %s in range %s", cur.Bundle.Name, s.chain(cur), r.Package, r.Range)
	if have := s.Get(r.Package); have != nil {
		if !rng.Contains(have.Bundle.Version) {
			return nil, fmt.Errorf("%w: %s, and %s %s is selected (%s)", ErrUnsatisfiable, need, have.Bundle.Name, have.Bundle.Version, s.chain(have))
		}
		s.edge(cur.Package, have.Package, what)
		return nil, nil
	}
	p := m.Packages[r.Package]
	if p == nil {
		return nil, fmt.Errorf("%w: %s, which the catalog does not have", ErrUnsatisfiable, need)
	}
	for _, ch := range p.channelOrder() {
		bundles, err := p.bundles(ch)
		if err != nil {
			return nil, err
		}
		var best *Bundle
		for _, b := range bundles {
			if rng.Contains(b.Version) && (best == nil || newer(b, best)) {
				best = b
			}
		}
		if best != nil {
			sel := &Selected{Package: p.Name, Channel: ch.Name, Bundle: best, RequiredBy: cur.Package, Requirement: what}
			s.Selected = append(s.Selected, sel)
			s.edge(cur.Package, p.Name, what)
			return sel, nil
		}
	}
	var all []*Bundle
	for _, n := range slices.Sorted(maps.Keys(p.Bundles)) {
		all = append(all, p.Bundles[n])
	}
	return nil, fmt.Errorf("%w: %s, and no bundle of it is (it has %s)", ErrUnsatisfiable, need, versionList(all))
}

// channelOrder is the package's default channel, then the others by name.
func (p *Package) channelOrder() []*Channel {
	var out []*Channel
	if c := p.Channels[p.DefaultChannel]; c != nil {
		out = append(out, c)
	}
	for _, n := range p.channelNames() {
		if n != p.DefaultChannel {
			out = append(out, p.Channels[n])
		}
	}
	return out
}

// requireGVK satisfies an olm.gvk.required of cur's bundle: by a selected
// bundle that provides the API, or by selecting the head of a package's
// channel that does (the default channels first, packages by name).
func (s *Set) requireGVK(m *Model, cur *Selected, g GVK) (*Selected, error) {
	what := "olm.gvk.required " + g.String()
	for _, sel := range s.Selected {
		if slices.Contains(sel.Bundle.Provides, g) {
			if sel.Package != cur.Package {
				s.edge(cur.Package, sel.Package, what)
			}
			return nil, nil
		}
	}
	type candidate struct {
		p  *Package
		c  *Channel
		b  *Bundle
		dc bool
	}
	var found []candidate
	for _, n := range slices.Sorted(maps.Keys(m.Packages)) {
		p := m.Packages[n]
		if s.Get(n) != nil {
			continue // selected, and its bundle does not provide it
		}
		for _, c := range p.channelOrder() {
			head, err := c.Head()
			if err != nil {
				continue
			}
			if b := p.Bundles[head]; b != nil && slices.Contains(b.Provides, g) {
				found = append(found, candidate{p, c, b, c.Name == p.DefaultChannel})
				break
			}
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%w: %s (%s) requires API %s, which no selected bundle and no channel head of the catalog provides", ErrUnsatisfiable, cur.Bundle.Name, s.chain(cur), g)
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].dc && !found[j].dc })
	f := found[0]
	if len(found) > 1 {
		var others []string
		for _, o := range found[1:] {
			others = append(others, o.p.Name)
		}
		s.Notes = append(s.Notes, fmt.Sprintf("operators: API %s that %s requires is provided by %s (channel %s) and also by %s; --operator %s chooses another", g, cur.Package, f.p.Name, f.c.Name, strings.Join(others, ", "), others[0]))
	}
	sel := &Selected{Package: f.p.Name, Channel: f.c.Name, Bundle: f.b, RequiredBy: cur.Package, Requirement: what}
	s.Selected = append(s.Selected, sel)
	s.edge(cur.Package, f.p.Name, what)
	return sel, nil
}

// edge records that from's bundle requires to's.
func (s *Set) edge(from, to, what string) {
	for _, e := range s.Edges {
		if e.From == from && e.To == to {
			return
		}
	}
	s.Edges = append(s.Edges, Edge{From: from, To: to, Requirement: what})
}

// checkImages refuses a selected bundle image or related image that is
// not a full reference, or is named by tag without opts.AllowUnpinned.
func (s *Set) checkImages(opts ResolveOptions) error {
	for _, sel := range s.Selected {
		b := sel.Bundle
		refs := []struct{ what, ref string }{}
		if b.Image != "" {
			refs = append(refs, struct{ what, ref string }{"bundle image", b.Image})
		}
		for _, ri := range b.RelatedImages {
			what := "related image"
			if ri.Name != "" {
				what += " " + text.QuoteExcerpt(ri.Name)
			}
			refs = append(refs, struct{ what, ref string }{what, ri.Image})
		}
		for _, r := range refs {
			if err := releases.ValidateRef(r.ref); err != nil {
				return fmt.Errorf("%s: bundle %s %s: %w", b.Where, text.QuoteExcerpt(b.Name), r.what, err)
			}
			if !releases.IsDigestPinned(r.ref) && !opts.AllowUnpinned {
				return fmt.Errorf("%s: bundle %s (%s) %s: %w: %s; mirror the catalog with digests (opm render, or oc-mirror), or pass --allow-unpinned to embed it by tag", b.Where, text.QuoteExcerpt(b.Name), s.chain(sel), r.what, ErrUnpinned, r.ref)
			}
		}
	}
	return nil
}

// listSome lists names, the first n of them and how many more.
func listSome(names []string, n int) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
