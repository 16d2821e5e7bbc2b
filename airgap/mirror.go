package airgap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
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
	// oci-archive:FILE).
	From Target
	// Progress follows the copy; nil reports nothing.
	Progress Progress
}

// Summary is what a mirror did.
type Summary struct {
	Destination string `json:"destination"`
	// Images are the images in the destination after the run.
	Images int `json:"images"`
	// Signatures are the sigstore signature attachments copied with the
	// images (counted apart from Images by the caller, which knows them).
	Signatures int `json:"signatures,omitempty"`
	// Blobs are the unique config and layer blobs of those images.
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
	// Duration is the wall time of the run.
	Duration time.Duration `json:"-"`
	Seconds  float64       `json:"seconds"`
}

// Mirror copies every image of refs from opts.From to the target, verified:
// for the plan's arch only (an index keeps its digest and holds only that
// platform's manifest in oci: and dir: layouts), or every platform with
// AllPlatforms and for registries and archives, which are loaded into
// registries. Blobs shared by images are copied once, and once per
// destination registry (other repositories mount them). Failures of some
// images do not stop the others; the error names the first failed image
// and how many failed.
func Mirror(ctx context.Context, refs []string, to Target, opts Options) (*Summary, error) {
	start := time.Now()
	if opts.Progress == nil {
		opts.Progress = NopProgress{}
	}
	defer opts.Progress.Stop()
	if opts.From.Transport != "" && sameTarget(opts.From, to) {
		return nil, fmt.Errorf("%w %q: it is also the source", ErrBadDestination, to)
	}
	m := &mirrorer{opts: opts, to: to, refs: refs}
	src, err := openSource(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer src.close()
	m.src = src
	var archive *archiveWriter
	switch to.Transport {
	case TransportOCI, TransportDir:
		if m.layout, err = openLayout(to.Path); err != nil {
			return nil, err
		}
		defer m.layout.close()
	case TransportArchive:
		if archive, err = openArchive(ctx, to.Path); err != nil {
			return nil, err
		}
		defer archive.close()
		m.layout = archive.staging
	}
	images, errs := m.resolveAll(ctx, refs)
	var sum *Summary
	if m.layout != nil {
		sum, err = m.copyToLayout(ctx, images, errs)
		if err == nil && archive != nil {
			err = archive.commit(ctx)
		}
		if err != nil && archive != nil && sum != nil {
			err = fmt.Errorf("%w (the completed images are kept in %s; run mirror again to resume)", err, archive.staging.dir)
		}
	} else {
		sum, err = m.copyToRegistry(ctx, images, errs)
	}
	if sum != nil {
		sum.Destination = to.String()
		sum.Duration = time.Since(start)
		sum.Seconds = sum.Duration.Round(time.Millisecond).Seconds()
	}
	return sum, err
}

// LayoutImages lists the images an OCI layout (oci:DIR or
// oci-archive:FILE) names with a full reference: what mirror --from copies
// without a plan.
func LayoutImages(from Target, reg registryclient.Options) ([]string, error) {
	s, err := openLayoutSource(from, reg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	names := s.names()
	if len(names) == 0 {
		return nil, fmt.Errorf("%s names no images (its %s is empty): nothing to mirror", from, indexFile)
	}
	return names, nil
}

func openSource(ctx context.Context, opts Options) (source, error) {
	if opts.From.Transport == "" {
		return newRegistrySource(ctx, opts.Registry)
	}
	return openLayoutSource(opts.From, opts.Registry)
}

func sameTarget(a, b Target) bool {
	if a.Transport == TransportDocker || b.Transport == TransportDocker {
		return false
	}
	return a.Path == b.Path
}

type mirrorer struct {
	refs   []string
	opts   Options
	to     Target
	src    source
	layout *layout
}

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

// blobTasks lists the unique blobs of the images, largest first so that
// the long copies start early, and the unique bytes.
func blobTasks(images []*image) ([]*blobTask, int64) {
	byDigest := map[v1.Hash]*blobTask{}
	var tasks []*blobTask
	var total int64
	for i, im := range images {
		if im == nil {
			continue
		}
		for _, b := range im.Blobs {
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

func (m *mirrorer) startProgress(images []*image) {
	sizes := make([]ImageBytes, len(images))
	for i, im := range images {
		sizes[i].Ref = m.refs[i]
		if im != nil {
			sizes[i].Bytes = im.Bytes()
		}
	}
	_, total := blobTasks(images)
	m.opts.Progress.Start(sizes, total)
}

func (m *mirrorer) copyToLayout(ctx context.Context, images []*image, errs []error) (*Summary, error) {
	tasks, _ := blobTasks(images)
	remaining := make([]int, len(images))
	for i, im := range images {
		if im != nil {
			remaining[i] = len(im.Blobs)
		}
	}
	p := m.opts.Progress
	m.startProgress(images)

	var (
		mu      sync.Mutex
		sum     = &Summary{}
		done    = make([]bool, len(images))
		blobErr = map[v1.Hash]error{}
	)
	finishImage := func(i int) {
		// Called with mu held when the image's last blob is in place.
		im := images[i]
		var err error
		for _, d := range im.Blobs {
			if e := blobErr[d.Digest]; e != nil {
				err = fmt.Errorf("%s: %w", im.Ref, e)
				break
			}
		}
		if err == nil {
			for _, mb := range im.Manifests {
				if err = m.layout.writeManifest(ctx, mb); err != nil {
					err = fmt.Errorf("%s: %w", im.Ref, err)
					break
				}
			}
		}
		if err == nil && m.to.Transport == TransportDir {
			if err = m.layout.writeDirView(im); err != nil {
				err = fmt.Errorf("%s: %w", im.Ref, err)
			}
		}
		if err != nil {
			errs[i] = err
		} else {
			done[i] = true
		}
		p.Done(i, err)
	}
	for i, im := range images {
		if im == nil {
			p.Done(i, errs[i])
		} else if remaining[i] == 0 {
			mu.Lock()
			finishImage(i)
			mu.Unlock()
		}
	}

	var g errgroup.Group
	g.SetLimit(jobs(m.opts))
	for _, t := range tasks {
		g.Go(func() error {
			fetched, err := m.fetchBlob(ctx, t)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				blobErr[t.desc.Digest] = err
			} else if fetched {
				sum.Fetched += t.desc.Size
			} else {
				sum.Skipped += t.desc.Size
			}
			for _, i := range t.images {
				if remaining[i]--; remaining[i] == 0 {
					finishImage(i)
				}
			}
			return nil
		})
	}
	g.Wait()

	var ok []*image
	for i, im := range images {
		if done[i] {
			ok = append(ok, im)
		}
	}
	// Always written, so that even an empty plan leaves a valid layout;
	// entries of earlier runs are kept.
	if err := m.layout.setIndex(ok); err != nil {
		return nil, err
	}
	if m.to.Transport == TransportDir {
		if err := m.layout.writeDirList(); err != nil {
			return nil, err
		}
	}
	sum.count(ok)
	return sum, failures(images, errs)
}

// fetchBlob makes the blob present in the layout: verified if already
// there, else streamed from the source (retried when the connection drops
// or stalls), reporting whether it was fetched.
func (m *mirrorer) fetchBlob(ctx context.Context, t *blobTask) (bool, error) {
	p := m.opts.Progress
	ok, err := m.layout.has(t.desc)
	if err != nil {
		return false, err
	}
	if ok {
		p.Add(t.desc.Size, t.images)
		return false, nil
	}
	err = m.opts.Registry.Retry(ctx, func() error {
		var counted int64
		err := m.fetchOnce(ctx, t, func(n int64) { counted += n; p.Add(n, t.images) })
		if err != nil && counted > 0 {
			p.Add(-counted, t.images) // the next attempt starts over
		}
		return err
	})
	if err != nil {
		return false, describeBlob(t, err)
	}
	return true, nil
}

func (m *mirrorer) fetchOnce(ctx context.Context, t *blobTask, counted func(int64)) error {
	rc, err := m.src.openBlob(ctx, t.from, t.desc)
	if err != nil {
		return err
	}
	defer rc.Close()
	return m.layout.write(ctx, t.desc, rc, counted)
}

func describeBlob(t *blobTask, err error) error {
	repo := t.from.from
	from := t.from.Ref
	if repo != nil {
		from = repo.String()
	}
	if errors.Is(err, ErrDigestMismatch) {
		return fmt.Errorf("refusing blob from %s: %w", from, err)
	}
	if errors.Is(err, context.Canceled) || repo == nil {
		return err
	}
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return fmt.Errorf("blob %s: %w in %s (404 Not Found): the registry lacks a blob the image's manifest references", t.desc.Digest, registryclient.ErrNotFound, from)
	}
	if errors.As(err, &terr) {
		return registryclient.Describe(repo.Digest(t.desc.Digest.String()).String(), err)
	}
	return fmt.Errorf("blob %s from %s: %w", t.desc.Digest, repo, err)
}

// count records the images copied and their distinct blobs and manifests.
func (s *Summary) count(copied []*image) {
	blobs, manifests := map[v1.Hash]bool{}, map[v1.Hash]bool{}
	for _, im := range copied {
		for _, b := range im.Blobs {
			blobs[b.Digest] = true
		}
		for _, mb := range im.Manifests {
			manifests[mb.Digest] = true
		}
	}
	s.Images, s.Blobs, s.Manifests = len(copied), len(blobs), len(manifests)
}

// jobs is the concurrency bound: --jobs, or the default.
func jobs(o Options) int {
	if o.Registry.Jobs <= 0 {
		return registryclient.DefaultJobs
	}
	return o.Registry.Jobs
}

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
