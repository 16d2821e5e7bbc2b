package airgap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

// ErrNothingKept is wrapped when prune is given nothing to keep: removing
// every image of a layout is `rm -r`, not a prune.
var ErrNothingKept = errors.New("nothing to keep")

// ErrKeptMissing is wrapped when an image a kept composition names is not
// in the layout: the lock is likely not the one the layout was mirrored
// from, and pruning by it would remove what the site still runs.
var ErrKeptMissing = errors.New("a kept image is not in the layout")

// Kept is a composition prune keeps: a compose.lock.json's images, or
// images named on their own (the bootc OS image).
type Kept struct {
	// Name is what the user named (the lock's path, or --image), for
	// messages.
	Name string
	Refs []string
}

// PruneOptions are what Prune needs beyond the layout and what it keeps.
type PruneOptions struct {
	// Registry parses references (registries.conf short names are not
	// used: references are full).
	Registry registryclient.Options
	// Apply removes what the report lists; without it nothing changes.
	Apply bool
	// removed, when set (tests), is called after each blob is removed;
	// an error stops the prune there, as an interruption would.
	removed func(n int) error
}

// PrunedImage is an index.json entry a prune drops.
type PrunedImage struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
}

// PrunedBlob is a blob (a config, layer, manifest or index) a prune
// removes, or a partial file a killed mirror left.
type PrunedBlob struct {
	Digest string `json:"digest,omitempty"`
	// File is the file's name under blobs/sha256 for a partial file.
	File string `json:"file,omitempty"`
	Size int64  `json:"size"`
}

// PruneReport is what a prune removes, or would remove.
type PruneReport struct {
	Layout  string `json:"layout"`
	Applied bool   `json:"applied"`
	// KeptImages counts the kept compositions' images, KeptAttachments
	// what is attached to them that the layout holds (cosign's tags and
	// OCI 1.1 referrers, and what is attached to those), and
	// KeptSignatures the sigstore signatures (.sig tags) among them.
	KeptImages      int   `json:"kept_images"`
	KeptAttachments int   `json:"kept_attachments"`
	KeptSignatures  int   `json:"kept_signatures"`
	KeptBlobs       int   `json:"kept_blobs"`
	KeptBytes       int64 `json:"kept_bytes"`
	// Images are the index.json entries no kept composition names.
	Images []PrunedImage `json:"images"`
	// Blobs are the files under blobs/sha256 no kept image reaches, sorted
	// by digest; Partials those a killed mirror left half written.
	Blobs    []PrunedBlob `json:"blobs"`
	Partials []PrunedBlob `json:"partials,omitempty"`
	// Freed is the bytes of Blobs and Partials: what removing them frees
	// (hard links elsewhere aside).
	Freed int64 `json:"bytes_freed"`
}

// Prune removes from the OCI layout dir every index.json entry that no
// kept composition names (what is attached to a kept image stays: its
// cosign tags and OCI 1.1 referrers, recursively)
// and every blob that no kept image reaches. Without opts.Apply it only
// reports. Every kept image must be in the layout, named as the lock
// writes it; a kept manifest the layout holds damaged stops the prune.
// The layout is locked as mirror locks it: a layout another process is
// writing is refused. index.json is swapped first, atomically, and blobs
// are removed after it: a prune interrupted anywhere leaves every kept
// image whole and the next run finishes it.
func Prune(ctx context.Context, target Target, keep []Kept, opts PruneOptions) (*PruneReport, error) {
	if target.Transport != TransportOCI {
		return nil, fmt.Errorf("%w %q: prune removes images from an OCI layout, oci:DIR (an archive is written anew by mirror; a registry is reported on, not pruned)", ErrBadDestination, target)
	}
	refs, owner, err := keptRefs(keep)
	if err != nil {
		return nil, err
	}
	dir := target.Path
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("%w %q: it is a file (an archive is written anew by mirror); prune removes images from an OCI layout directory", ErrBadDestination, target)
	}
	unlock, err := lockExistingLayout(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	s, err := openLayoutStore(target, opts.Registry)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if s.bundle != nil {
		return nil, fmt.Errorf("%w %s: it is a differential bundle (it holds %s); prune the layout it was applied to", ErrBadDestination, target, BundleFile)
	}
	if _, err := os.Lstat(filepath.Join(dir, DirListFile)); err == nil {
		return nil, fmt.Errorf("%w %s: it has %s: %s", ErrBadDestination, target, DirListFile, DirNotPruned)
	}

	// What is kept: the entries naming kept images, and what is attached
	// to them (attached.go).
	report := &PruneReport{Layout: target.String(), Images: []PrunedImage{}, Blobs: []PrunedBlob{}}
	var kept, others []v1.Descriptor
	found := map[string]bool{}
	for _, d := range s.entries {
		if n := d.Annotations[AnnotationRefName]; n != "" {
			if _, isImage := owner[n]; isImage {
				kept = append(kept, d)
				found[n] = true
				continue
			}
		}
		others = append(others, d)
	}
	for _, r := range refs {
		if !found[r] {
			return nil, fmt.Errorf("%w: %s names %s, which %s does not hold; nothing was removed (keep the locks the layout was mirrored from)", ErrKeptMissing, owner[r], r, target)
		}
	}
	report.KeptImages = len(refs)
	// A kept image whose manifest is missing or damaged is not pruned
	// around: the walk below would not see what it needs.
	for _, d := range kept {
		if d.MediaType.IsIndex() || d.MediaType.IsImage() {
			if _, err := s.manifest(d); err != nil {
				return nil, fmt.Errorf("%s: the kept image %s: %w; nothing was removed", target, d.Annotations[AnnotationRefName], err)
			}
		}
	}
	attachments, err := s.attachedEntries(ctx, kept, others, opts.Registry)
	if err != nil {
		return nil, err
	}
	for _, d := range others {
		if a, ok := attachments[d.Digest.String()+" "+d.Annotations[AnnotationRefName]]; ok {
			kept = append(kept, d)
			report.KeptAttachments++
			if a == KindSignature {
				report.KeptSignatures++
			}
			continue
		}
		report.Images = append(report.Images, PrunedImage{Name: d.Annotations[AnnotationRefName], Digest: d.Digest.String()})
	}
	need, err := s.reachEntries(ctx, kept, reachOptions{referenced: true})
	if err != nil {
		return nil, fmt.Errorf("reading what the kept images need: %w", err)
	}
	for _, b := range need.Blobs() {
		if _, err := os.Lstat(filepath.Join(dir, "blobs", "sha256", b.Digest.Hex)); err == nil {
			report.KeptBlobs++
			report.KeptBytes += b.Size
		}
	}

	// What goes: every other blob file, and partial files.
	blobDir := filepath.Join(dir, "blobs", "sha256")
	files, err := os.ReadDir(blobDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", blobDir, err)
	}
	for _, f := range files {
		if !f.Type().IsRegular() {
			continue // directories, links: not ours to judge
		}
		info, err := f.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("reading %s: %w", blobDir, err)
		}
		fn := f.Name()
		if strings.HasPrefix(fn, ".") && strings.Contains(fn, partialMark) {
			report.Partials = append(report.Partials, PrunedBlob{File: fn, Size: info.Size()})
			report.Freed += info.Size()
			continue
		}
		d, err := v1.NewHash("sha256:" + fn)
		if err != nil {
			continue // not a blob name: someone else's file
		}
		if need.Has(d) {
			continue
		}
		report.Blobs = append(report.Blobs, PrunedBlob{Digest: d.String(), Size: info.Size()})
		report.Freed += info.Size()
	}
	if !opts.Apply {
		return report, nil
	}

	// index.json first: from here on the dropped images are gone, and
	// what a kept image needs is still there whatever happens next.
	if len(report.Images) > 0 {
		idx := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: slices.Clone(kept)}
		data, err := encodeIndex(&idx)
		if err != nil {
			return nil, err
		}
		if err := writeFileAtomic(filepath.Join(dir, indexFile), data); err != nil {
			return nil, fmt.Errorf("writing %s: %w", filepath.Join(dir, indexFile), err)
		}
	}
	n := 0
	remove := func(file string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := os.Remove(filepath.Join(blobDir, file)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", filepath.Join(blobDir, file), err)
		}
		n++
		if opts.removed != nil {
			return opts.removed(n)
		}
		return nil
	}
	for _, b := range report.Blobs {
		if err := remove(strings.TrimPrefix(b.Digest, "sha256:")); err != nil {
			return nil, err
		}
	}
	for _, p := range report.Partials {
		if err := remove(p.File); err != nil {
			return nil, err
		}
	}
	report.Applied = true
	return report, nil
}

// lockExistingLayout takes the lock mirror holds while it writes the
// layout dir (its oci-layout file, flock'ed), without creating anything.
func lockExistingLayout(dir string) (func(), error) {
	f, err := os.Open(filepath.Join(dir, layoutFile))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(dir); serr != nil {
			return nil, fmt.Errorf("opening oci:%s: %w", dir, unwrapPath(serr))
		}
		return nil, fmt.Errorf("oci:%s: %w (no %s in it)", dir, ErrNotLayout, layoutFile)
	}
	if err != nil {
		return nil, fmt.Errorf("opening OCI layout %s: %w", dir, err)
	}
	ok, err := tryLock(f)
	if err != nil || !ok {
		f.Close()
		if err == nil {
			err = errors.New("another process is writing it (a mirror or a prune); try again when it is done")
		}
		return nil, fmt.Errorf("locking OCI layout %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// keptRefs lists the image references the kept compositions name, each
// once in the order first named, with the composition that named it first.
func keptRefs(keep []Kept) (refs []string, owner map[string]string, err error) {
	owner = map[string]string{}
	for _, k := range keep {
		for _, r := range k.Refs {
			if _, ok := owner[r]; !ok {
				owner[r] = k.Name
				refs = append(refs, r)
			}
		}
	}
	if len(refs) == 0 {
		return nil, nil, fmt.Errorf("%w: name the compositions the site still runs (--keep compose.lock.json, repeatable)", ErrNothingKept)
	}
	return refs, owner, nil
}
