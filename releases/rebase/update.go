package rebase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/pmezard/go-difflib/difflib"
	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/internal/atomicfile"
	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/suggest"
	"github.com/microshift-compose/microshift-compose/releases"
)

// ErrNothingToUpdate is returned when the options name no source of new
// references.
var ErrNothingToUpdate = errors.New("nothing to update: give --payload, --csv or --resolve-tags")

// ErrDigestToTag is wrapped when an update would replace a digest-pinned
// reference with a tag.
var ErrDigestToTag = errors.New("refusing to replace a digest with a tag")

// UpdateOptions say where new image references come from and which release
// files take them.
type UpdateOptions struct {
	// Payloads are OpenShift release payloads, one per arch: the files of
	// an arch take its payload's images for the keys they have (a key is
	// a payload tag name unless Map says otherwise), and the payload's
	// version as release.base.
	Payloads map[releases.Arch]*Payload
	// CSV is an operator bundle's ClusterServiceVersion. Its images are
	// arch-independent (usually index digests): the keys Map names take
	// them in every selected file, and with Selection.Components set, so
	// do the keys of those files that equal a relatedImages name. A file
	// whose every image the CSV supplies takes spec.version as
	// release.base.
	CSV *CSV
	// Map maps a release key to the payload tag or relatedImages name it
	// takes, when the two are spelled differently (lvms_operator =
	// lvms-operator).
	Map map[string]string
	// Selection narrows the files updated. When it is empty, a payload
	// updates the files of its arch that follow the OpenShift release
	// (release.base of the core file's major.minor: the core file, OLM,
	// Multus, but not Gateway API or cert-manager, which carry their own
	// versions), and a CSV or ResolveTags alone every file.
	Selection Selection
	// ResolveTags turns the tag references of the selected files into
	// digests from the registry: the platform manifest of the file's arch,
	// or with IndexDigest the index itself.
	ResolveTags bool
	IndexDigest bool
	// AllowTags lets a tag replace a digest-pinned reference (with a
	// warning); without it that is an error.
	AllowTags bool
	// Registry is how ResolveTags reaches registries.
	Registry registryclient.Options
}

// Update is the outcome of Prepare: the new contents of the selected
// files, not yet written.
type Update struct {
	Dir string `json:"dir"`
	// Files are the selected files, sorted by name, changed or not.
	Files    []*FileUpdate `json:"files"`
	Warnings []string      `json:"warnings"`
}

// FileUpdate is one selected release file, before and after.
type FileUpdate struct {
	Name      string        `json:"file"`
	Component string        `json:"component"`
	Arch      releases.Arch `json:"arch"`
	OldBase   string        `json:"old_base"`
	NewBase   string        `json:"new_base"`
	// Changes are the images whose reference changes, in file order.
	Changes []ImageChange `json:"changes"`
	// Kept are the keys looked up in the payload or CSV that it does not
	// have, left as they were (e.g. lvms_operator in a payload update of
	// the core file).
	Kept []string `json:"kept"`
	// NotUpdated says why a file a payload was to update took nothing from
	// it (none of its images are payload tags: the metrics files, whose
	// images OpenShift's payload does not carry), so it stays at its old
	// release.base; "" for a file the update fed.
	NotUpdated string `json:"not_updated,omitempty"`
	path       string
	old        []byte
	new        []byte
}

// ImageChange is a new reference for a key.
type ImageChange struct {
	Key string `json:"key"`
	Old string `json:"old"`
	New string `json:"new"`
	// Source says where New came from: the payload or CSV (and the tag
	// or relatedImages name), or the registry for a resolved tag.
	Source string `json:"source"`
	// Tag is the tag reference New was resolved from, if it was.
	Tag string `json:"tag,omitempty"`
}

// Changed reports whether the file's bytes change.
func (f *FileUpdate) Changed() bool { return !bytes.Equal(f.old, f.new) }

// Path is the file's path.
func (f *FileUpdate) Path() string { return f.path }

// Changed lists the files whose bytes change.
func (u *Update) Changed() []*FileUpdate {
	var out []*FileUpdate
	for _, f := range u.Files {
		if f.Changed() {
			out = append(out, f)
		}
	}
	return out
}

// Diff is a unified diff of every changed file (paths as given in Dir), the
// form `git apply` and `patch -p0` read; empty when nothing changes.
func (u *Update) Diff() []byte {
	var b bytes.Buffer
	for _, f := range u.Changed() {
		text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: splitLines(f.old), B: splitLines(f.new),
			FromFile: f.path, ToFile: f.path, Context: 3,
		})
		if err != nil { // only writing to a strings.Builder, which cannot fail
			panic(err)
		}
		b.WriteString(text)
	}
	return b.Bytes()
}

// splitLines splits text into lines that keep their newline; a last line
// without one gets one (release files end in a newline; Encode writes one).
func splitLines(data []byte) []string {
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] += "\n"
	}
	return lines
}

// Write replaces the changed files atomically, all or none even when the
// process is killed (atomicfile.Commit with a journal in the directory:
// an interrupted update is finished by FinishInterrupted, and refused by
// every reader until then), keeping each file's mode. A read-only file is
// an error before anything is written.
func (u *Update) Write() error {
	var files []atomicfile.File
	for _, f := range u.Changed() {
		files = append(files, atomicfile.File{Path: f.path, Data: f.new})
	}
	if len(files) == 0 {
		return nil
	}
	return atomicfile.Commit(filepath.Join(u.Dir, releases.UpdateJournal), files)
}

// source is a payload or a CSV, as the update reads it.
type source struct {
	label string // for messages: payload FILE (VERSION)
	what  string // what its names are: "tag" or "relatedImages entry"
	names []string
	find  func(string) (string, bool)
	// version becomes release.base of the files it feeds.
	version string
	// byName: keys equal to a name take its image without a Map entry.
	byName bool
	// baseRule: "any" sets release.base on a file when it supplies one of
	// its images, "all" when it supplies every one.
	baseRule string
	// payload: an OpenShift payload, which every selected file of its arch
	// expects to take images from.
	payload  bool
	supplied int
}

// Prepare computes the update of the release files in dir; nothing is
// written (Write does that, Diff shows it). Every check runs here: the
// inputs match the files, tags resolve, no digest is replaced by a tag
// unless allowed, and the updated files still form a release.
func Prepare(ctx context.Context, dir string, o UpdateOptions) (*Update, error) {
	if len(o.Payloads) == 0 && o.CSV == nil && !o.ResolveTags {
		return nil, ErrNothingToUpdate
	}
	if len(o.Payloads) > 0 && o.CSV != nil {
		return nil, errors.New("--payload and --csv cannot be combined; run one update per source")
	}
	if o.IndexDigest && !o.ResolveTags {
		return nil, errors.New("--index-digest chooses what --resolve-tags writes; add --resolve-tags")
	}
	dfs, rel, err := readDir(dir)
	if err != nil {
		return nil, err
	}
	raw := map[string]*dirFile{}
	var files []*releases.File
	for _, d := range dfs {
		raw[d.file.Name] = d
		files = append(files, d.file)
	}
	selected, err := selectFiles(dir, files, rel, o)
	if err != nil {
		return nil, err
	}

	srcs, err := newSources(o)
	if err != nil {
		return nil, err
	}
	if err := checkMap(o.Map, selected, srcs.forArch); err != nil {
		return nil, err
	}
	u, work := apply(dir, raw, selected, o.Map, srcs)
	if err := srcs.checkSupplied(selected); err != nil {
		return nil, err
	}

	if o.ResolveTags {
		if err := resolveTags(ctx, o, u, selected, work); err != nil {
			return nil, err
		}
	}
	if err := checkPins(o, u, selected, work); err != nil {
		return nil, err
	}

	var all []*releases.File
	for _, d := range dfs {
		if nf, ok := work[d.file.Name]; ok {
			all = append(all, nf)
		} else {
			all = append(all, d.file)
		}
	}
	if rel != nil {
		if _, err := releases.New(dir, all); err != nil {
			return nil, fmt.Errorf("the updated files would not form a release: %w", err)
		}
	}
	for _, fu := range u.Files {
		nf := work[fu.Name]
		fu.NewBase = nf.Base
		data, err := releases.Patch(fu.path, fu.old, nf)
		if err != nil {
			return nil, err
		}
		if _, err := releases.ParseFile(fu.path, fu.Name, data); err != nil {
			return nil, fmt.Errorf("the updated file does not parse (a bug): %w", err)
		}
		fu.new = data
		sort.Strings(fu.Kept)
	}
	return u, nil
}

// sources are the payloads (per arch) or the CSV (every arch) of an update.
type sources struct {
	payloads map[releases.Arch]*source
	csv      *source
}

func newSources(o UpdateOptions) (*sources, error) {
	s := &sources{payloads: map[releases.Arch]*source{}}
	for a, p := range o.Payloads {
		if err := p.CheckArch(a); err != nil {
			hint := ""
			for _, other := range releases.Arches {
				if other.GOARCH() == p.Arch {
					hint = fmt.Sprintf("; pass it as --payload %s=%s", other, p.Source)
				}
			}
			return nil, fmt.Errorf("payload %s: %w%s", p.Source, err, hint)
		}
		s.payloads[a] = &source{
			label: fmt.Sprintf("payload %s (%s)", p.Source, p.Version), what: "tag",
			names: p.Names(), find: p.Lookup, version: p.Version, byName: true, baseRule: "any", payload: true,
		}
	}
	if o.CSV != nil {
		s.csv = &source{
			label: fmt.Sprintf("CSV %s (%s)", o.CSV.Source, o.CSV.Name), what: "relatedImages entry",
			names: o.CSV.Names(), find: o.CSV.Lookup, version: o.CSV.Version,
			byName: len(o.Selection.Components) > 0, baseRule: "all",
		}
	}
	return s, nil
}

// forArch is the source feeding the files of an arch, or nil.
func (s *sources) forArch(a releases.Arch) *source {
	if s.csv != nil {
		return s.csv
	}
	return s.payloads[a]
}

// checkSupplied fails for a source that supplied no key at all.
func (s *sources) checkSupplied(selected []*releases.File) error {
	for _, a := range releases.Arches {
		if p := s.payloads[a]; p != nil && p.supplied == 0 {
			return noMatch(p, selected, a)
		}
	}
	if s.csv != nil && s.csv.supplied == 0 {
		return noMatch(s.csv, selected, "")
	}
	return nil
}

// apply gives the selected files the sources' references (and versions),
// returning the update so far and the files as they become.
func apply(dir string, raw map[string]*dirFile, selected []*releases.File, m map[string]string, srcs *sources) (*Update, map[string]*releases.File) {
	u := &Update{Dir: dir, Warnings: []string{}}
	work := map[string]*releases.File{}
	for _, f := range selected {
		nf := *f
		nf.Images = slices.Clone(f.Images)
		work[f.Name] = &nf
		fu := &FileUpdate{Name: f.Name, Component: ComponentName(f), Arch: f.Arch, OldBase: f.Base,
			path: raw[f.Name].path, old: raw[f.Name].data}
		u.Files = append(u.Files, fu)
		src := srcs.forArch(f.Arch)
		if src == nil {
			continue
		}
		supplied := 0
		for i, im := range f.Images {
			n, mapped := m[im.Key]
			if !mapped {
				if !src.byName {
					continue // not asked for: a CSV feeds only mapped keys
				}
				n = im.Key
			}
			ref, ok := src.find(n)
			if !ok {
				fu.Kept = append(fu.Kept, im.Key)
				continue
			}
			supplied++
			if ref != im.Ref {
				fu.Changes = append(fu.Changes, ImageChange{Key: im.Key, Old: im.Ref, New: ref, Source: src.label + ": " + n})
			}
			nf.Images[i].Ref = ref
		}
		src.supplied += supplied
		if src.version != "" && supplied > 0 && (src.baseRule == "any" || supplied == len(f.Images)) {
			nf.Base = src.version
		}
		if src.payload && supplied == 0 && len(f.Images) > 0 {
			fu.NotUpdated = notUpdated(f, src, m)
			u.Warnings = append(u.Warnings, fmt.Sprintf("%s: not updated: %s", fu.path, fu.NotUpdated))
		}
	}
	return u, work
}

// notUpdated says why a payload fed none of a file's images, and how to
// update the file: a --map for keys a payload tag is spelled close to,
// else the file's own source.
func notUpdated(f *releases.File, src *source, m map[string]string) string {
	var keys, maps []string
	for _, im := range f.Images {
		keys = append(keys, im.Key)
		if _, mapped := m[im.Key]; mapped {
			continue
		}
		if s := suggest.Closest(im.Key, src.names); s != "" {
			maps = append(maps, "--map "+im.Key+"="+s)
		}
	}
	how := fmt.Sprintf("update it from its images' own source (release update --component %s with --csv or --resolve-tags)", ComponentName(f))
	if len(maps) > 0 {
		how = "if the payload's tag is the image, map it: " + strings.Join(maps, " ")
	}
	return fmt.Sprintf("%s has none of its images (%s), so it stays at release.base %s; %s",
		src.label, strings.Join(keys, ", "), f.Base, how)
}

// selectFiles picks the files an update works on; see UpdateOptions.Selection.
// rel is nil for a directory of component files only.
func selectFiles(dir string, all []*releases.File, rel *releases.Release, o UpdateOptions) ([]*releases.File, error) {
	if !o.Selection.IsZero() || len(o.Payloads) == 0 {
		files, err := o.Selection.Filter(all, dir)
		if err != nil {
			return nil, err
		}
		for a, p := range o.Payloads {
			if !slices.ContainsFunc(files, func(f *releases.File) bool { return f.Arch == a }) {
				return nil, fmt.Errorf("payload %s is for %s, but no %s file is selected", p.Source, a, a)
			}
		}
		return files, nil
	}
	var out []*releases.File
	for _, a := range releases.Arches {
		p := o.Payloads[a]
		if p == nil {
			continue
		}
		var core *releases.File
		if rel != nil {
			core = rel.File("", a)
		}
		if core == nil {
			return nil, fmt.Errorf("payload %s is for %s, but %s has no %s to say which files follow the OpenShift release; name them with --component",
				p.Source, a, dir, releases.FileName("", a))
		}
		stream := majorMinor(core.Base)
		for _, f := range all {
			if f.Arch == a && majorMinor(f.Base) == stream {
				out = append(out, f)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// majorMinor is "4.18" for a release.base of 4.18.0-0.nightly-..., "" when
// it is not a semantic version.
func majorMinor(base string) string {
	v, err := semver.NewVersion(base)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d.%d", v.Major(), v.Minor())
}

// checkMap makes sure every KEY=NAME pair maps something: the key is in a
// selected file, and the source feeding that file has the name.
func checkMap(m map[string]string, selected []*releases.File, sourceFor func(releases.Arch) *source) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var allKeys []string
	for _, f := range selected {
		for _, im := range f.Images {
			if !slices.Contains(allKeys, im.Key) {
				allKeys = append(allKeys, im.Key)
			}
		}
	}
	for _, k := range keys {
		n := m[k]
		found := false
		for _, f := range selected {
			if _, ok := f.Lookup(k); !ok {
				continue
			}
			found = true
			src := sourceFor(f.Arch)
			if src == nil {
				continue
			}
			if _, ok := src.find(n); !ok {
				hint := ""
				if s := suggest.Closest(n, src.names); s != "" {
					hint = fmt.Sprintf("; did you mean %q?", s)
				}
				return fmt.Errorf("mapping %s=%s: %s has no %s %q%s", k, n, src.label, src.what, n, hint)
			}
		}
		if !found {
			hint := ""
			if s := suggest.Closest(k, allKeys); s != "" {
				hint = fmt.Sprintf("; did you mean %q?", s)
			}
			return fmt.Errorf("mapping %s=%s: no selected release file has the image key %q%s", k, n, k, hint)
		}
	}
	return nil
}

// noMatch is the error for a source that supplies no key of the selected
// files: almost always the wrong file, or names that need a mapping.
func noMatch(s *source, selected []*releases.File, arch releases.Arch) error {
	var names []string
	for _, f := range selected {
		if arch == "" || f.Arch == arch {
			names = append(names, f.Name)
		}
	}
	if !s.byName {
		return fmt.Errorf("%s: nothing to update: map release keys to its relatedImages with --map KEY=NAME, or name the components it feeds with --component to match keys by name (it has %s)",
			s.label, quoteList(s.names, 5))
	}
	return fmt.Errorf("%s has none of the image keys of %s; is it the right input? (--map KEY=NAME maps differently named keys; it has %s)",
		s.label, strings.Join(names, ", "), quoteList(s.names, 5))
}

// resolveTags replaces the tag references of the selected files with
// digests, concurrently, failing with every tag that did not resolve.
func resolveTags(ctx context.Context, o UpdateOptions, u *Update, selected []*releases.File, work map[string]*releases.File) error {
	reg, err := newRegistry(ctx, o.Registry)
	if err != nil {
		return err
	}
	type job struct {
		fu  *FileUpdate
		i   int
		ref string
		out string
		err *ImageError
	}
	var jobs []*job
	for _, fu := range u.Files {
		for i, im := range work[fu.Name].Images {
			if !releases.IsDigestPinned(im.Ref) {
				jobs = append(jobs, &job{fu: fu, i: i, ref: im.Ref})
			}
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobsOf(o.Registry))
	for _, j := range jobs {
		g.Go(func() error {
			in, ierr := reg.inspect(gctx, j.ref, j.fu.Arch)
			if ierr != nil {
				j.err = ierr
				return nil
			}
			digest := in.PlatformDigest
			if o.IndexDigest {
				digest = in.Digest
			}
			ref, err := imageref.ParseReference(j.ref, name.StrictValidation)
			if err != nil {
				j.err = &ImageError{ReasonInvalid, err.Error()}
				return nil
			}
			j.out = ref.Context().Name() + "@" + digest
			return nil
		})
	}
	_ = g.Wait() // jobs record their own errors
	if err := ctx.Err(); err != nil {
		return err
	}
	var failed []string
	for _, j := range jobs {
		if j.err != nil {
			failed = append(failed, fmt.Sprintf("%s image %q: %s: %s", j.fu.path, work[j.fu.Name].Images[j.i].Key, j.ref, j.err.Msg))
			continue
		}
		nf := work[j.fu.Name]
		key := nf.Images[j.i].Key
		nf.Images[j.i].Ref = j.out
		// One change per key: a tag the payload or CSV brought keeps its
		// source and gains the digest.
		k := slices.IndexFunc(j.fu.Changes, func(c ImageChange) bool { return c.Key == key })
		if k < 0 {
			old := selected[slices.IndexFunc(selected, func(f *releases.File) bool { return f.Name == j.fu.Name })].Images[j.i].Ref
			j.fu.Changes = append(j.fu.Changes, ImageChange{Key: key, Old: old, New: j.out, Source: "registry", Tag: j.ref})
		} else {
			j.fu.Changes[k].New, j.fu.Changes[k].Tag = j.out, j.ref
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("resolving tags: %s%s", failed[0], more(len(failed)-1))
	}
	for _, fu := range u.Files {
		order := map[string]int{}
		for i, im := range work[fu.Name].Images {
			order[im.Key] = i
		}
		sort.SliceStable(fu.Changes, func(a, b int) bool { return order[fu.Changes[a].Key] < order[fu.Changes[b].Key] })
	}
	return nil
}

func jobsOf(o registryclient.Options) int {
	if o.Jobs > 0 {
		return o.Jobs
	}
	return registryclient.DefaultJobs
}

func more(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" (and %d more)", n)
}

// checkPins refuses to replace a digest with a tag unless allowed, and drops
// change records whose value ends up unchanged.
func checkPins(o UpdateOptions, u *Update, selected []*releases.File, work map[string]*releases.File) error {
	var bad []string
	for k, f := range selected {
		path := u.Files[k].path // u.Files parallels selected
		for i, im := range f.Images {
			nr := work[f.Name].Images[i].Ref
			if nr == im.Ref || !releases.IsDigestPinned(im.Ref) || releases.IsDigestPinned(nr) {
				continue
			}
			msg := fmt.Sprintf("%s image %q: the digest-pinned %s would become the tag %s", path, im.Key, im.Ref, nr)
			if o.AllowTags {
				u.Warnings = append(u.Warnings, msg+" (allowed)")
				continue
			}
			bad = append(bad, msg)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s%s; pass --resolve-tags to pin it to a digest, or --allow-tags to write the tag", ErrDigestToTag, bad[0], more(len(bad)-1))
	}
	for _, fu := range u.Files {
		fu.Changes = slices.DeleteFunc(fu.Changes, func(c ImageChange) bool { return c.Old == c.New })
		if fu.Changes == nil {
			fu.Changes = []ImageChange{}
		}
		if fu.Kept == nil {
			fu.Kept = []string{}
		}
	}
	return nil
}
