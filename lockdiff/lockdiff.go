package lockdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/internal/transfer"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/knowledge"
)

// Lock is a compose.lock.json read with lockfile.Load or
// lockfile.Parse, and the path that names it in the diff.
type Lock struct {
	Path string
	Plan *plan.Plan
}

// Diff is what changed from one lock to another.
type Diff struct {
	Old Side `json:"old"`
	New Side `json:"new"`
	// Components selected on one side only, in apply order, with why
	// they are in (new side) or were in (old side).
	ComponentsAdded   []ComponentChange `json:"components_added"`
	ComponentsRemoved []ComponentChange `json:"components_removed"`
	// Images, by the component and release-file key that needs them.
	ImagesAdded   []ImageUse    `json:"images_added"`
	ImagesRemoved []ImageUse    `json:"images_removed"`
	ImagesChanged []ImageChange `json:"images_changed"`
	// ImageCount is the number of distinct images on each side.
	ImageCount Count           `json:"image_count"`
	Packages   []PackageChange `json:"packages"`
	Config     []SettingChange `json:"config"`
	Files      []FileChange    `json:"files"`
	// Manifests are the manifests.d directories added, removed or with
	// other resources.
	Manifests []ManifestChange `json:"manifests"`
	// Operators are the operator sets' changes: the catalogs and the
	// packages with another bundle; absent when neither lock has one.
	Operators *OperatorsChange `json:"operators,omitempty"`
	Footprint *FootprintChange `json:"footprint,omitempty"`
	// Transfer is what the update moves across an air gap, when the
	// images were read (diff --resolve-sizes or --from; see AddTransfer).
	Transfer *transfer.Report `json:"transfer,omitempty"`
	// Upgrade says whether a device running the old build can take the
	// new one (MicroShift of the new release starts on the old one's
	// data, by its own rule); absent when both are one major.minor.
	Upgrade *knowledge.Verdict `json:"upgrade,omitempty"`
	// Notes say what could not be compared (e.g. a footprint on one side).
	Notes []string `json:"notes"`
}

// Side identifies one lock.
type Side struct {
	Path    string `json:"path"`
	Release string `json:"release"`
	Base    string `json:"base"`
	Arch    string `json:"arch"`
	Profile string `json:"profile"`
	// Distro is the distro the build targets.
	Distro string `json:"distro"`
}

// Count is a number on both sides.
type Count struct {
	Old int `json:"old"`
	New int `json:"new"`
}

// ComponentChange is a component on one side only.
type ComponentChange struct {
	Name    string   `json:"name"`
	Reasons []string `json:"reasons"`
}

func componentChange(c plan.Component) ComponentChange {
	cc := ComponentChange{Name: c.Name, Reasons: []string{}}
	for _, r := range c.Reasons {
		cc.Reasons = append(cc.Reasons, r.String())
	}
	return cc
}

// ImageUse is an image and the release-file entry that names it.
type ImageUse struct {
	Component string `json:"component"`
	Key       string `json:"key"`
	Ref       string `json:"ref"`
}

// ImageChange is a release-file entry whose image changed.
type ImageChange struct {
	Component string `json:"component"`
	Key       string `json:"key"`
	Old       string `json:"old"`
	New       string `json:"new"`
}

// PackageChange is an RPM added, removed or given another version.
type PackageChange struct {
	Name   string `json:"name"`
	Change string `json:"change"` // added, removed, version
	Old    string `json:"old,omitempty"`
	New    string `json:"new,omitempty"`
}

// SettingChange is a config drop-in value that changed.
type SettingChange struct {
	Path string `json:"path"`
	Old  any    `json:"old"`
	New  any    `json:"new"`
}

// FileChange is a device file added, removed or with new content.
type FileChange struct {
	Path   string `json:"path"`
	Change string `json:"change"` // added, removed, changed
}

// ManifestChange is a manifests.d directory on one side only, or with
// resources added or removed.
type ManifestChange struct {
	Dir              string   `json:"dir"`
	Component        string   `json:"component"`
	Change           string   `json:"change"` // added, removed, changed
	ResourcesAdded   []string `json:"resources_added"`
	ResourcesRemoved []string `json:"resources_removed"`
}

func compareManifests(a, b []plan.Manifest) []ManifestChange {
	out := []ManifestChange{}
	find := func(list []plan.Manifest, dir string) *plan.Manifest {
		for i := range list {
			if list[i].Dir == dir {
				return &list[i]
			}
		}
		return nil
	}
	minus := func(x, y []string) []string {
		d := []string{}
		for _, r := range x {
			if !slices.Contains(y, r) {
				d = append(d, r)
			}
		}
		return d
	}
	for _, m := range b {
		o := find(a, m.Dir)
		switch {
		case o == nil:
			out = append(out, ManifestChange{m.Dir, m.Component, "added", slices.Clone(m.Resources), []string{}})
		default:
			add, rm := minus(m.Resources, o.Resources), minus(o.Resources, m.Resources)
			if len(add)+len(rm) > 0 {
				out = append(out, ManifestChange{m.Dir, m.Component, "changed", add, rm})
			}
		}
	}
	for _, m := range a {
		if find(b, m.Dir) == nil {
			out = append(out, ManifestChange{m.Dir, m.Component, "removed", []string{}, slices.Clone(m.Resources)})
		}
	}
	return out
}

// Compare diffs two locks. A lock whose footprint section states sizes no
// build could have written is an error naming it.
func Compare(a, b *Lock) (*Diff, error) {
	for _, l := range []*Lock{a, b} {
		if err := checkFootprint(l); err != nil {
			return nil, err
		}
	}
	var err error
	d := &Diff{
		Old: side(a), New: side(b),
		ComponentsAdded: []ComponentChange{}, ComponentsRemoved: []ComponentChange{},
		ImagesAdded: []ImageUse{}, ImagesRemoved: []ImageUse{}, ImagesChanged: []ImageChange{},
		Packages: []PackageChange{}, Config: []SettingChange{}, Files: []FileChange{}, Notes: []string{},
		ImageCount: Count{len(a.Plan.Images), len(b.Plan.Images)},
	}
	oc, nc := a.Plan.ComponentNames(), b.Plan.ComponentNames()
	for _, c := range b.Plan.Components {
		if !slices.Contains(oc, c.Name) {
			d.ComponentsAdded = append(d.ComponentsAdded, componentChange(c))
		}
	}
	for _, c := range a.Plan.Components {
		if !slices.Contains(nc, c.Name) {
			d.ComponentsRemoved = append(d.ComponentsRemoved, componentChange(c))
		}
	}

	ou, nu := uses(a.Plan), uses(b.Plan)
	for _, k := range sortedKeys(nu) {
		if o, ok := ou[k]; !ok {
			d.ImagesAdded = append(d.ImagesAdded, ImageUse{k.component, k.key, nu[k]})
		} else if o != nu[k] {
			d.ImagesChanged = append(d.ImagesChanged, ImageChange{k.component, k.key, o, nu[k]})
		}
	}
	for _, k := range sortedKeys(ou) {
		if _, ok := nu[k]; !ok {
			d.ImagesRemoved = append(d.ImagesRemoved, ImageUse{k.component, k.key, ou[k]})
		}
	}

	op, np := packages(a.Plan), packages(b.Plan)
	for _, n := range unionKeys(op, np) {
		o, inOld := op[n]
		nv, inNew := np[n]
		switch {
		case !inOld:
			d.Packages = append(d.Packages, PackageChange{Name: n, Change: "added", New: nv})
		case !inNew:
			d.Packages = append(d.Packages, PackageChange{Name: n, Change: "removed", Old: o})
		case o != nv:
			d.Packages = append(d.Packages, PackageChange{Name: n, Change: "version", Old: o, New: nv})
		}
	}

	oldSet, newSet := settings(a.Plan), settings(b.Plan)
	for _, path := range unionKeys(oldSet, newSet) {
		if !reflect.DeepEqual(oldSet[path], newSet[path]) {
			d.Config = append(d.Config, SettingChange{Path: path, Old: oldSet[path], New: newSet[path]})
		}
	}

	of, nf := files(a.Plan), files(b.Plan)
	for _, path := range unionKeys(of, nf) {
		o, inOld := of[path]
		n, inNew := nf[path]
		switch {
		case !inOld:
			d.Files = append(d.Files, FileChange{path, "added"})
		case !inNew:
			d.Files = append(d.Files, FileChange{path, "removed"})
		case o != n:
			d.Files = append(d.Files, FileChange{path, "changed"})
		}
	}

	d.Manifests = compareManifests(a.Plan.Manifests, b.Plan.Manifests)
	d.Operators = compareOperators(a.Plan, b.Plan)
	d.Footprint, d.Notes = compareFootprints(a, b)
	if d.Notes == nil {
		d.Notes = []string{}
	}
	d.Upgrade, err = upgradeVerdict(a.Plan.Release.Version, b.Plan.Release.Version)
	if err != nil {
		d.Notes = append(d.Notes, "upgrade not judged: "+err.Error())
	}
	return d, nil
}

// upgradeVerdict judges a device going from the old release to the new by
// the new release's rule.
func upgradeVerdict(from, to string) (*knowledge.Verdict, error) {
	f, err := semver.NewVersion(from)
	if err != nil {
		return nil, fmt.Errorf("release %q is not a version", from)
	}
	t, err := semver.NewVersion(to)
	if err != nil {
		return nil, fmt.Errorf("release %q is not a version", to)
	}
	know, err := knowledge.Default()
	if err != nil {
		return nil, err
	}
	return know.UpgradeVerdict(f, t)
}

// Empty reports whether the locks describe the same device image.
func (d *Diff) Empty() bool {
	return d.Old.Release == d.New.Release && d.Old.Base == d.New.Base && d.Old.Arch == d.New.Arch && d.Old.Distro == d.New.Distro &&
		len(d.ComponentsAdded)+len(d.ComponentsRemoved)+len(d.ImagesAdded)+len(d.ImagesRemoved)+len(d.ImagesChanged)+
			len(d.Packages)+len(d.Config)+len(d.Files)+len(d.Manifests) == 0 && d.Operators == nil && (d.Footprint == nil || !d.Footprint.changed())
}

func side(l *Lock) Side {
	p := l.Plan
	distro := p.Target.Distro
	if distro == "" { // a lock older than targets
		distro = p.Release.Distro
	}
	return Side{Path: l.Path, Release: p.Release.Version, Base: p.Release.Base, Arch: p.Arch, Profile: p.Profile, Distro: distro}
}

type useKey struct{ component, key string }

func uses(p *plan.Plan) map[useKey]string {
	out := map[useKey]string{}
	for _, im := range p.Images {
		for _, u := range im.Uses {
			out[useKey{u.Component, u.Key}] = im.Ref
		}
	}
	return out
}

func sortedKeys(m map[useKey]string) []useKey {
	keys := make([]useKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].component != keys[j].component {
			return keys[i].component < keys[j].component
		}
		return keys[i].key < keys[j].key
	})
	return keys
}

func packages(p *plan.Plan) map[string]string {
	out := map[string]string{}
	for _, pk := range p.Packages {
		out[pk.Name] = pk.Version
	}
	return out
}

func settings(p *plan.Plan) map[string]any {
	out := map[string]any{}
	for _, s := range p.ConfigSources {
		out[s.Path] = s.Value
	}
	return out
}

func files(p *plan.Plan) map[string]string {
	out := map[string]string{}
	for _, f := range p.Files {
		out[f.Path] = f.SHA256 + "/" + f.Mode
	}
	return out
}

func unionKeys[V any](a, b map[string]V) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Markdown renders the diff for a pull request description.
func (d *Diff) Markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "### compose.lock.json: %s → %s\n\n", text.CodeSpan(d.Old.Path), text.CodeSpan(d.New.Path))
	b.WriteString("| | old | new |\n| --- | --- | --- |\n")
	for _, r := range [][3]string{
		{"release", d.Old.Release, d.New.Release},
		{"release.base", d.Old.Base, d.New.Base},
		{"arch", d.Old.Arch, d.New.Arch},
		{"profile", d.Old.Profile, d.New.Profile},
		{"distro", d.Old.Distro, d.New.Distro},
		{"images", fmt.Sprint(d.ImageCount.Old), fmt.Sprint(d.ImageCount.New)},
	} {
		mark := ""
		if r[1] != r[2] {
			mark = " **changed**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s%s |\n", r[0], text.CodeCell(r[1]), text.CodeCell(r[2]), mark)
	}
	if d.Empty() {
		b.WriteString("\nNo changes.\n")
		return b.Bytes()
	}
	if d.Upgrade != nil {
		fmt.Fprintf(&b, "\n#### Upgrade\n\n%s\n", d.Upgrade.Sentence())
	}
	if len(d.ComponentsAdded)+len(d.ComponentsRemoved) > 0 {
		b.WriteString("\n#### Components\n\n")
		for _, c := range d.ComponentsAdded {
			fmt.Fprintf(&b, "- added %s (%s)\n", text.CodeSpan(c.Name), text.MarkdownText(strings.Join(c.Reasons, "; ")))
		}
		for _, c := range d.ComponentsRemoved {
			fmt.Fprintf(&b, "- removed %s (was: %s)\n", text.CodeSpan(c.Name), text.MarkdownText(strings.Join(c.Reasons, "; ")))
		}
	}
	if d.Operators != nil {
		d.Operators.markdown(&b)
	}
	if len(d.ImagesAdded)+len(d.ImagesRemoved)+len(d.ImagesChanged) > 0 {
		b.WriteString("\n#### Images\n\n| component | key | change | image |\n| --- | --- | --- | --- |\n")
		for _, c := range d.ImagesChanged {
			fmt.Fprintf(&b, "| %s | %s | changed | %s → %s |\n", text.MarkdownText(c.Component), text.CodeCell(c.Key), text.CodeCell(releases.ShortRef(c.Old)), text.CodeCell(releases.ShortRef(c.New)))
		}
		for _, u := range d.ImagesAdded {
			fmt.Fprintf(&b, "| %s | %s | added | %s |\n", text.MarkdownText(u.Component), text.CodeCell(u.Key), text.CodeCell(releases.ShortRef(u.Ref)))
		}
		for _, u := range d.ImagesRemoved {
			fmt.Fprintf(&b, "| %s | %s | removed | %s |\n", text.MarkdownText(u.Component), text.CodeCell(u.Key), text.CodeCell(releases.ShortRef(u.Ref)))
		}
	}
	if len(d.Packages) > 0 {
		b.WriteString("\n#### Packages\n\n")
		for _, p := range d.Packages {
			switch p.Change {
			case "added":
				fmt.Fprintf(&b, "- added %s %s\n", text.CodeSpan(p.Name), version(p.New))
			case "removed":
				fmt.Fprintf(&b, "- removed %s %s\n", text.CodeSpan(p.Name), version(p.Old))
			default:
				fmt.Fprintf(&b, "- %s %s → %s\n", text.CodeSpan(p.Name), version(p.Old), version(p.New))
			}
		}
	}
	if len(d.Config) > 0 {
		b.WriteString("\n#### Config\n\n")
		for _, s := range d.Config {
			fmt.Fprintf(&b, "- %s: %s → %s\n", text.CodeSpan(s.Path), value(s.Old), value(s.New))
		}
	}
	if len(d.Files) > 0 {
		b.WriteString("\n#### Device files\n\n")
		for _, f := range d.Files {
			fmt.Fprintf(&b, "- %s %s\n", f.Change, text.CodeSpan(f.Path))
		}
	}
	if len(d.Manifests) > 0 {
		b.WriteString("\n#### Manifests\n\n")
		for _, m := range d.Manifests {
			switch m.Change {
			case "added":
				fmt.Fprintf(&b, "- added %s (%s): %s\n", text.CodeSpan(m.Dir), text.MarkdownText(m.Component), text.MarkdownText(strings.Join(m.ResourcesAdded, ", ")))
			case "removed":
				fmt.Fprintf(&b, "- removed %s (%s)\n", text.CodeSpan(m.Dir), text.MarkdownText(m.Component))
			default:
				var parts []string
				for _, r := range m.ResourcesAdded {
					parts = append(parts, "+ "+r)
				}
				for _, r := range m.ResourcesRemoved {
					parts = append(parts, "− "+r)
				}
				fmt.Fprintf(&b, "- %s (%s): %s\n", text.CodeSpan(m.Dir), text.MarkdownText(m.Component), text.MarkdownText(strings.Join(parts, ", ")))
			}
		}
	}
	if d.Footprint != nil {
		d.Footprint.markdown(&b)
	}
	if d.Transfer != nil {
		d.Transfer.Markdown(&b)
	}
	for _, n := range d.Notes {
		fmt.Fprintf(&b, "\nNote: %s\n", text.MarkdownText(n))
	}
	return b.Bytes()
}

// version prints an RPM version glob; "" means any version.
func version(v string) string {
	if v == "" {
		return "(any version)"
	}
	return text.MarkdownText(v)
}

func value(v any) string {
	if v == nil {
		return "(unset)"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return text.CodeSpan(string(data))
}
