package airgap

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/releases"
)

// Options configure Mirror and Footprint.
type Options struct {
	Registry registryclient.Options
	// Arch is the plan's arch: the platform taken out of an index. Empty
	// (mirror --from a layout without a plan): what the layout holds.
	Arch releases.Arch
	// AllPlatforms copies every platform of an index.
	AllPlatforms bool
	// From is where images are read: the zero Target for their registries
	// (through registries.conf mirrors), or an OCI layout (oci:DIR or
	// oci-archive:FILE, split or not). A differential bundle there is
	// applied: the blobs it leaves out must be at the destination.
	From Target
	// Built are layouts build wrote (BuiltLayout: a plan's filtered
	// operator catalog), holding images no registry has: with From
	// unset, an image one of them names is read from it.
	Built []Target
	// Bundle, when set, makes the destination (oci:DIR or
	// oci-archive:FILE) a differential bundle.
	Bundle *BundleOptions
	// PartSize, when positive, writes an oci-archive:FILE destination as
	// a split archive of parts of at most that many bytes.
	PartSize int64
	// Sign, when set, signs an oci-archive:FILE destination: FILE.sig,
	// or FILE.parts.json.sig for a split archive (archive_signature.go).
	Sign SignFunc
	// Progress follows the copy; nil reports nothing.
	Progress Progress
}

// Summary is what a mirror did.
type Summary struct {
	Destination string `json:"destination"`
	// Images are the images in the destination after the run.
	Images int `json:"images"`
	// Signatures, Attestations and SBOMs are the cosign attachments
	// (sha256-HEX.sig, .att and .sbom tags) copied with the images, and
	// Referrers their OCI 1.1 referrers (signature bundles, attestations,
	// SBOMs), all counted apart from Images.
	Signatures   int `json:"signatures,omitempty"`
	Attestations int `json:"attestations,omitempty"`
	SBOMs        int `json:"sboms,omitempty"`
	Referrers    int `json:"referrers,omitempty"`
	// Blobs are the unique config and layer blobs of those images (in a
	// bundle, those it holds).
	Blobs int `json:"blobs"`
	// Manifests are the manifests stored (indexes and image manifests).
	Manifests int `json:"manifests"`
	// Fetched is the blob bytes copied in this run: written to a layout,
	// or uploaded to a registry.
	Fetched int64 `json:"bytes_fetched"`
	// Skipped is the blob bytes already present (and verified, in a
	// layout): in a registry, per repository.
	Skipped int64 `json:"bytes_skipped"`
	// Mounted is the blob bytes a registry destination mounted from
	// another of its repositories instead of receiving them again.
	Mounted int64 `json:"bytes_mounted"`
	// Uploads and Mounts count blob uploads and cross-repository mounts
	// (registry destinations).
	Uploads int `json:"blob_uploads"`
	Mounts  int `json:"blob_mounts"`
	// Omitted and OmittedBytes are the blobs a differential bundle leaves
	// out (writing one), or that the destination had to hold already
	// (applying one).
	Omitted      int   `json:"blobs_omitted,omitempty"`
	OmittedBytes int64 `json:"bytes_omitted,omitempty"`
	// Bundle is set when a differential bundle was written or applied.
	Bundle string `json:"bundle,omitempty"`
	// ArchiveBytes is the size of an archive written; Parts and
	// PartsWritten the parts of a split one, and how many of them this
	// run wrote (the others were there already, byte for byte).
	ArchiveBytes int64 `json:"archive_bytes,omitempty"`
	Parts        int   `json:"parts,omitempty"`
	PartsWritten int   `json:"parts_written,omitempty"`
	// Duration is the wall time of the run.
	Duration time.Duration `json:"-"`
	Seconds  float64       `json:"seconds"`
}

type mirrorer struct {
	refs   []string
	opts   Options
	to     Target
	src    source
	layout *layout

	// from is the bundle the source is, if it is one: applied to the
	// destination, or copied (copyBundle) into a new archive.
	from       *Bundle
	copyBundle bool
	// skip are the blobs left out: of the bundle being written or copied
	// (held by its base), or of the bundle being applied (held by the
	// destination, checked before anything is written).
	skip map[v1.Hash]OmittedBlob
	// bundleOut is the BundleFile the destination gets.
	bundleOut []byte
	// mountFrom is, for a blob a registry destination must already hold,
	// a repository of it that has it; present the repository@digest pairs
	// found there while checking (not asked again).
	mountFrom map[v1.Hash]name.Repository
	present   map[string]bool
}

// applying reports whether a differential bundle is being applied (not
// copied into a new archive).
func (m *mirrorer) applying() bool { return m.from != nil && !m.copyBundle }

// selection is which platforms of an index are copied: all of them for a
// registry (it cannot hold part of an index, and a device pulls by the
// index digest the release pins) and for an archive (it is loaded into a
// registry), else the plan arch's.
func (m *mirrorer) selection() selection {
	whole := m.opts.AllPlatforms || m.to.Transport == TransportDocker || m.to.Transport == TransportArchive
	return selection{whole: whole, arch: m.opts.Arch}
}

// resolveAll reads every image's manifests, concurrently. errs[i] is set
// for an image that could not be read.
func (m *mirrorer) resolveAll(ctx context.Context, refs []string) ([]*image, []error) {
	images := make([]*image, len(refs))
	errs := make([]error, len(refs))
	sel := m.selection()
	var g errgroup.Group
	g.SetLimit(jobs(m.opts))
	for i, ref := range refs {
		g.Go(func() error {
			images[i], errs[i] = resolve(ctx, m.src, ref, sel)
			if errs[i] == nil && sel.whole && !m.opts.AllPlatforms && images[i].Platforms > 1 {
				slog.Info("copying every platform of a multi-arch index to keep its digest (a registry cannot hold part of an index)", "image", ref, "platforms", images[i].Platforms)
			}
			return nil
		})
	}
	g.Wait()
	return images, errs
}

// blobTask is one unique blob: the first image that needs it (to read it
// from) and every image that does.
type blobTask struct {
	desc   v1.Descriptor
	from   *image
	images []int
}

// blobTasks lists the unique blobs of the images but those in skip,
// largest first so that the long copies start early, and their bytes.
func blobTasks(images []*image, skip map[v1.Hash]OmittedBlob) ([]*blobTask, int64) {
	byDigest := map[v1.Hash]*blobTask{}
	var tasks []*blobTask
	var total int64
	for i, im := range images {
		if im == nil {
			continue
		}
		for _, b := range im.Blobs {
			if _, ok := skip[b.Digest]; ok {
				continue
			}
			t := byDigest[b.Digest]
			if t == nil {
				t = &blobTask{desc: b, from: im}
				byDigest[b.Digest] = t
				tasks = append(tasks, t)
				total += b.Size
			}
			t.images = append(t.images, i)
		}
	}
	slices.SortStableFunc(tasks, func(a, b *blobTask) int {
		switch {
		case a.desc.Size > b.desc.Size:
			return -1
		case a.desc.Size < b.desc.Size:
			return 1
		}
		return 0
	})
	return tasks, total
}

// startProgress starts the progress with the bytes to copy: skip's
// blobs are not.
func (m *mirrorer) startProgress(images []*image, skip map[v1.Hash]OmittedBlob) {
	sizes := make([]ImageBytes, len(images))
	for i, im := range images {
		sizes[i].Ref = m.refs[i]
		if im == nil {
			continue
		}
		for _, b := range im.Blobs {
			if _, ok := skip[b.Digest]; !ok {
				sizes[i].Bytes += b.Size
			}
		}
	}
	_, total := blobTasks(images, skip)
	m.opts.Progress.Start(sizes, total)
}

// leftOut is what a bundle being written or copied leaves out: not
// counted among the destination's blobs.
func (m *mirrorer) leftOut() map[v1.Hash]OmittedBlob {
	if m.bundleOut != nil {
		return m.skip
	}
	return nil
}

// count records the images copied and their distinct blobs (but those
// left out) and manifests.
func (s *Summary) count(copied []*image, left map[v1.Hash]OmittedBlob) {
	blobs, manifests := map[v1.Hash]bool{}, map[v1.Hash]bool{}
	for _, im := range copied {
		for _, b := range im.Blobs {
			if _, ok := left[b.Digest]; !ok {
				blobs[b.Digest] = true
			}
		}
		for _, mb := range im.Manifests {
			manifests[mb.Digest] = true
		}
	}
	s.Blobs, s.Manifests = len(blobs), len(manifests)
	s.Images, s.Signatures, s.Attestations, s.SBOMs, s.Referrers = 0, 0, 0, 0, 0
	for _, im := range copied {
		switch {
		case im.Subject != nil:
			s.Referrers++
		case AttachmentKind(im.Ref) == KindSignature:
			s.Signatures++
		case AttachmentKind(im.Ref) == KindAttestation:
			s.Attestations++
		case AttachmentKind(im.Ref) == KindSBOM:
			s.SBOMs++
		default:
			s.Images++
		}
	}
}

// jobs is the concurrency bound: --jobs, or the default.
func jobs(o Options) int { return jobsOf(o.Registry) }

// failures is nil when no image failed, else the first failure and a count.
func failures(images []*image, errs []error) error {
	var first error
	n := 0
	for _, err := range errs {
		if err != nil {
			if first == nil {
				first = err
			}
			n++
		}
	}
	switch n {
	case 0:
		return nil
	case 1:
		return first
	}
	return fmt.Errorf("%w (and %d more of %d images failed)", first, n-1, len(images))
}
