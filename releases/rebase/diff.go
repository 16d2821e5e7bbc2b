package rebase

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/internal/transfer"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// ReleaseDiff is what changed between two releases, per component and
// arch: the form a rebase pull request is reviewed in.
type ReleaseDiff struct {
	Old ReleaseSide `json:"old"`
	New ReleaseSide `json:"new"`
	// Bases are the core files' release.base per arch ("" where a side
	// has no core file for the arch).
	Bases []BaseChange `json:"bases"`
	// Components that changed, sorted by name (core first).
	Components []ComponentDiff `json:"components"`
	// Unchanged lists the components present and equal on both sides.
	Unchanged []string `json:"unchanged"`
	Summary   Summary  `json:"summary"`
	// Upgrade says whether a device on the old release can take the new
	// one, by the new release's rule; absent when both are one
	// major.minor.
	Upgrade *knowledge.Verdict `json:"upgrade,omitempty"`
	// Notes say what could not be judged.
	Notes []string `json:"notes,omitempty"`
	// Transfer is what the update moves across an air gap, per arch, when
	// the images were read (release diff --resolve-sizes or --from; see
	// AddTransfer).
	Transfer []*transfer.Report `json:"transfer,omitempty"`
}

// ReleaseSide identifies one side of a diff.
type ReleaseSide struct {
	Label   string `json:"label"`
	Version string `json:"version"`
	Source  string `json:"source"`
	Origin  string `json:"origin,omitempty"`
}

// BaseChange is the core release.base of one arch on both sides.
type BaseChange struct {
	Arch releases.Arch `json:"arch"`
	Old  string        `json:"old"`
	New  string        `json:"new"`
}

// ComponentDiff is the changed files of one component.
type ComponentDiff struct {
	Component string     `json:"component"`
	Files     []FileDiff `json:"files"`
}

// File diff statuses.
const (
	FileAdded   = "added"
	FileRemoved = "removed"
	FileChanged = "changed"
)

// FileDiff is one release file that was added, removed or changed.
type FileDiff struct {
	File    string           `json:"file"`
	Arch    releases.Arch    `json:"arch"`
	Status  string           `json:"status"`
	OldBase string           `json:"old_base"`
	NewBase string           `json:"new_base"`
	Added   []releases.Image `json:"added"`
	Removed []releases.Image `json:"removed"`
	Changed []RefChange      `json:"changed"`
}

// Kinds of reference change.
const (
	// ChangeDigest: same repository, new digest (the usual rebase change).
	ChangeDigest = "re-digested"
	// ChangeRepository: the image moved to another registry or repository.
	ChangeRepository = "moved"
	// ChangeTag: a tag reference changed or was pinned/unpinned.
	ChangeTag = "re-tagged"
)

// RefChange is a key whose reference changed.
type RefChange struct {
	Key  string `json:"key"`
	Kind string `json:"kind"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// Summary counts image entries over every file.
type Summary struct {
	Added       int `json:"added"`
	Removed     int `json:"removed"`
	Redigested  int `json:"re_digested"`
	OtherChange int `json:"other_changes"`
	// BaseChanges counts files present on both sides whose release.base
	// changed.
	BaseChanges int `json:"base_changes"`
}

// Empty reports whether nothing changed.
func (d *ReleaseDiff) Empty() bool { return len(d.Components) == 0 && !d.basesChanged() }

func (d *ReleaseDiff) basesChanged() bool {
	for _, b := range d.Bases {
		if b.Old != b.New {
			return true
		}
	}
	return false
}

// DiffReleases compares two releases file by file. oldLabel and newLabel
// name the sides for people ("4.18 (embedded)", a directory).
func DiffReleases(oldRel, newRel *releases.Release, oldLabel, newLabel string) *ReleaseDiff {
	d := &ReleaseDiff{
		Old:        side(oldRel, oldLabel),
		New:        side(newRel, newLabel),
		Components: []ComponentDiff{},
		Unchanged:  []string{},
	}
	if know, err := knowledge.Default(); err != nil {
		d.Notes = append(d.Notes, "upgrade not judged: "+err.Error())
	} else if d.Upgrade, err = know.UpgradeVerdict(oldRel.Version, newRel.Version); err != nil {
		d.Notes = append(d.Notes, "upgrade not judged: "+err.Error())
	}
	for _, a := range releases.Arches {
		o, n := oldRel.Base(a), newRel.Base(a)
		if o != "" || n != "" {
			d.Bases = append(d.Bases, BaseChange{Arch: a, Old: o, New: n})
		}
	}
	byComp := map[string][]FileDiff{}
	present := map[string]bool{}
	names := map[string]bool{}
	for _, f := range oldRel.Files() {
		names[f.Name] = true
	}
	for _, f := range newRel.Files() {
		names[f.Name] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.SortFunc(sorted, compareFileNames)
	for _, n := range sorted {
		comp, arch, _, _ := releases.ParseFileName(n)
		of, nf := oldRel.File(comp, arch), newRel.File(comp, arch)
		var c string
		if of != nil {
			c = ComponentName(of)
		} else {
			c = ComponentName(nf)
		}
		present[c] = true
		fd, changed := diffFile(of, nf)
		if !changed {
			continue
		}
		byComp[c] = append(byComp[c], fd)
		d.Summary.Added += len(fd.Added)
		d.Summary.Removed += len(fd.Removed)
		for _, ch := range fd.Changed {
			if ch.Kind == ChangeDigest {
				d.Summary.Redigested++
			} else {
				d.Summary.OtherChange++
			}
		}
		if fd.Status == FileChanged && fd.OldBase != fd.NewBase {
			d.Summary.BaseChanges++
		}
	}
	comps := make([]string, 0, len(present))
	for c := range present {
		comps = append(comps, c)
	}
	slices.SortFunc(comps, compareComponents)
	for _, c := range comps {
		if files, ok := byComp[c]; ok {
			d.Components = append(d.Components, ComponentDiff{Component: c, Files: files})
		} else {
			d.Unchanged = append(d.Unchanged, c)
		}
	}
	return d
}

func side(r *releases.Release, label string) ReleaseSide {
	return ReleaseSide{Label: label, Version: r.Version.String(), Source: r.Source, Origin: r.Origin}
}

// compareFileNames orders files by component (core first), then arch in
// releases.Arches order.
func compareFileNames(a, b string) int {
	ca, aa, _, _ := releases.ParseFileName(a)
	cb, ab, _, _ := releases.ParseFileName(b)
	if ca != cb {
		return compareComponents(componentOf(ca), componentOf(cb))
	}
	return slices.Index(releases.Arches, aa) - slices.Index(releases.Arches, ab)
}

func componentOf(c string) string {
	if c == "" {
		return CoreComponent
	}
	return c
}

func compareComponents(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == CoreComponent:
		return -1
	case b == CoreComponent:
		return 1
	}
	return strings.Compare(a, b)
}

func diffFile(of, nf *releases.File) (FileDiff, bool) {
	fd := FileDiff{Added: []releases.Image{}, Removed: []releases.Image{}, Changed: []RefChange{}}
	switch {
	case of == nil:
		fd.File, fd.Arch, fd.Status, fd.NewBase = nf.Name, nf.Arch, FileAdded, nf.Base
		fd.Added = append(fd.Added, nf.Images...)
		return fd, true
	case nf == nil:
		fd.File, fd.Arch, fd.Status, fd.OldBase = of.Name, of.Arch, FileRemoved, of.Base
		fd.Removed = append(fd.Removed, of.Images...)
		return fd, true
	}
	fd.File, fd.Arch, fd.Status, fd.OldBase, fd.NewBase = nf.Name, nf.Arch, FileChanged, of.Base, nf.Base
	for _, im := range nf.Images {
		old, ok := of.Lookup(im.Key)
		switch {
		case !ok:
			fd.Added = append(fd.Added, im)
		case old != im.Ref:
			fd.Changed = append(fd.Changed, RefChange{Key: im.Key, Kind: changeKind(old, im.Ref), Old: old, New: im.Ref})
		}
	}
	for _, im := range of.Images {
		if _, ok := nf.Lookup(im.Key); !ok {
			fd.Removed = append(fd.Removed, im)
		}
	}
	changed := len(fd.Added)+len(fd.Removed)+len(fd.Changed) > 0 || of.Base != nf.Base
	return fd, changed
}

func changeKind(old, new string) string {
	or, err1 := imageref.ParseReference(old)
	nr, err2 := imageref.ParseReference(new)
	if err1 != nil || err2 != nil || or.Context().Name() != nr.Context().Name() {
		return ChangeRepository
	}
	_, od := or.(name.Digest)
	_, nd := nr.(name.Digest)
	if od && nd {
		return ChangeDigest
	}
	return ChangeTag
}

// Markdown renders the diff for a pull request description: the base
// versions, a summary line, and a table of image changes per component.
// Digests are shortened to 12 hex digits; --output json has them whole.
func (d *ReleaseDiff) Markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "### MicroShift release %s → %s\n\n", text.MarkdownText(d.Old.Label), text.MarkdownText(d.New.Label))
	if d.Old.Origin != d.New.Origin && (d.Old.Origin != "" || d.New.Origin != "") {
		fmt.Fprintf(&b, "Origin: %s → %s\n\n", text.MarkdownText(orDash(d.Old.Origin)), text.MarkdownText(orDash(d.New.Origin)))
	}
	if len(d.Bases) > 0 {
		b.WriteString("| arch | release.base |\n| --- | --- |\n")
		for _, bc := range d.Bases {
			fmt.Fprintf(&b, "| %s | %s |\n", bc.Arch, strings.ReplaceAll(change(bc.Old, bc.New), "|", `\|`))
		}
		b.WriteByte('\n')
	}
	if d.Upgrade != nil {
		fmt.Fprintf(&b, "Upgrade: %s\n\n", d.Upgrade.Sentence())
	}
	for _, n := range d.Notes {
		fmt.Fprintf(&b, "Note: %s\n\n", text.MarkdownText(n))
	}
	if d.Empty() {
		b.WriteString("No image changes.\n")
		return b.Bytes()
	}
	s := d.Summary
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{s.Added, "added"}, {s.Removed, "removed"}, {s.Redigested, "re-digested"}, {s.OtherChange, "otherwise changed"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "no image changes")
	} else {
		parts[0] = plural(parts[0])
	}
	fmt.Fprintf(&b, "**%s** in %s", strings.Join(parts, ", "), countOf(len(d.Components), "component"))
	if len(d.Unchanged) > 0 {
		fmt.Fprintf(&b, "; unchanged: %s", text.MarkdownText(strings.Join(d.Unchanged, ", ")))
	}
	b.WriteString(".\n")
	for _, c := range d.Components {
		fmt.Fprintf(&b, "\n#### %s\n\n", text.MarkdownText(c.Component))
		var notes []string
		rows := 0
		for _, f := range c.Files {
			switch f.Status {
			case FileAdded:
				notes = append(notes, fmt.Sprintf("%s added (release.base %s)", text.CodeSpan(f.File), text.CodeSpan(f.NewBase)))
			case FileRemoved:
				notes = append(notes, fmt.Sprintf("%s removed", text.CodeSpan(f.File)))
			default:
				if f.OldBase != f.NewBase {
					notes = append(notes, fmt.Sprintf("%s release.base %s", text.CodeSpan(f.File), change(f.OldBase, f.NewBase)))
				}
			}
			rows += len(f.Added) + len(f.Removed) + len(f.Changed)
		}
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		if rows == 0 {
			continue
		}
		if len(notes) > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("| arch | image | change | old | new |\n| --- | --- | --- | --- | --- |\n")
		for _, f := range c.Files {
			for _, ch := range f.Changed {
				o, n := releases.ShortRef(ch.Old), releases.ShortRef(ch.New)
				if ch.Kind == ChangeDigest {
					o, n = releases.ShortDigest(digestOf(ch.Old)), releases.ShortDigest(digestOf(ch.New))
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", f.Arch, text.CodeCell(ch.Key), ch.Kind, text.CodeCell(o), text.CodeCell(n))
			}
			for _, im := range f.Added {
				fmt.Fprintf(&b, "| %s | %s | added | | %s |\n", f.Arch, text.CodeCell(im.Key), text.CodeCell(releases.ShortRef(im.Ref)))
			}
			for _, im := range f.Removed {
				fmt.Fprintf(&b, "| %s | %s | removed | %s | |\n", f.Arch, text.CodeCell(im.Key), text.CodeCell(releases.ShortRef(im.Ref)))
			}
		}
	}
	d.transferMarkdown(&b)
	return b.Bytes()
}

func change(o, n string) string {
	switch {
	case o == n:
		return text.CodeSpan(o) + " (unchanged)"
	case o == "":
		return "(none) → " + text.CodeSpan(n)
	case n == "":
		return text.CodeSpan(o) + " → (none)"
	}
	return text.CodeSpan(o) + " → " + text.CodeSpan(n)
}

func orDash(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// plural turns "1 added" into "1 image added" and "3 added" into
// "3 images added", for the first part of the summary line.
func plural(part string) string {
	n, rest, _ := strings.Cut(part, " ")
	if n == "1" {
		return n + " image " + rest
	}
	return n + " images " + rest
}

func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func digestOf(ref string) string {
	if _, d, ok := strings.Cut(ref, "@"); ok {
		return d
	}
	return ref
}
