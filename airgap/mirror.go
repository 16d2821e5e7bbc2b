package airgap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

// Bundle values of Summary.
const (
	BundleWritten = "written"
	BundleApplied = "applied"
)

// Mirror copies every image of refs from opts.From to the target, verified:
// for the plan's arch only (an index keeps its digest and holds only that
// platform's manifest in oci: and dir: layouts), or every platform with
// AllPlatforms and for registries and archives, which are loaded into
// registries. Blobs shared by images are copied once, and once per
// destination registry (other repositories mount them). Failures of some
// images do not stop the others; the error names the first failed image
// and how many failed.
//
// With opts.Bundle, the destination is a differential bundle: the blobs
// the bases reach are left out (see BundleFile). With a bundle as
// opts.From, the bundle is applied: every blob it leaves out must be at
// the destination, which is checked before anything is written; into a
// new oci-archive: destination, the bundle is copied as it is (cut into
// parts, or joined).
func Mirror(ctx context.Context, refs []string, to Target, opts Options) (*Summary, error) {
	start := time.Now()
	if opts.Progress == nil {
		opts.Progress = NopProgress{}
	}
	defer opts.Progress.Stop()
	if err := checkNotReplaced("--from", opts.From, to); err != nil {
		return nil, err
	}
	if opts.Bundle != nil {
		for _, b := range opts.Bundle.Since {
			if err := checkNotReplaced("--since", b.Layout, to); err != nil {
				return nil, err
			}
		}
	}
	if opts.Bundle != nil && to.Transport != TransportOCI && to.Transport != TransportArchive {
		return nil, fmt.Errorf("%w %q: a differential bundle is written to oci:DIR or oci-archive:FILE, carried to the site, and applied there with mirror --from", ErrBadDestination, to)
	}
	if opts.PartSize > 0 && to.Transport != TransportArchive {
		return nil, fmt.Errorf("%w %q: only an oci-archive:FILE is written in parts", ErrBadDestination, to)
	}
	m := &mirrorer{opts: opts, to: to, refs: refs}
	src, err := openSource(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer src.close()
	m.src = src
	if ls, ok := src.(*layoutSource); ok && ls.bundle != nil {
		if opts.Bundle != nil {
			return nil, fmt.Errorf("%w: %s is a differential bundle, which lacks the blobs its base holds: make the new bundle from the images' registries or a full layout", ErrBadSource, opts.From)
		}
		if err := checkBundleArch(ls.bundle, opts.Arch, opts.From); err != nil {
			return nil, err
		}
		m.from = ls.bundle
		m.copyBundle = to.Transport == TransportArchive && !archiveExists(to.Path)
	}
	images, errs := m.resolveAll(ctx, refs)
	if err := checkSubjects(refs, images, opts.Registry); err != nil {
		return nil, err
	}
	switch {
	case opts.Bundle != nil:
		if err := m.planBundle(ctx, images, errs); err != nil {
			return nil, err
		}
	case m.copyBundle:
		if err := m.planBundleCopy(images, errs); err != nil {
			return nil, err
		}
	case m.from != nil:
		if err := m.planApply(images); err != nil {
			return nil, err
		}
	}
	var archive *archiveWriter
	switch to.Transport {
	case TransportOCI, TransportDir:
		if m.from != nil && !m.copyBundle {
			// Nothing is created for a bundle the destination cannot
			// take.
			if err := m.checkBaseBeforeOpen(to.Path, images); err != nil {
				return nil, err
			}
		}
		if m.layout, err = openLayout(to.Path); err != nil {
			return nil, err
		}
		defer m.layout.close()
		if err := m.layout.checkBundleDestination(to, m.bundleOut != nil); err != nil {
			return nil, err
		}
		if m.from != nil && !m.copyBundle {
			if err := m.checkBaseLayout(ctx, images); err != nil {
				return nil, err
			}
		}
	case TransportArchive:
		if m.from != nil && !m.copyBundle {
			if err := m.checkBaseArchive(ctx, to.Path, images); err != nil {
				return nil, err
			}
		}
		if _, layoutSrc := src.(*layoutSource); layoutSrc && !archiveExists(to.Path) {
			sum, err := m.packDirect(ctx, images, errs)
			return m.finish(sum, err, start)
		}
		if archive, err = openArchive(ctx, to.Path, opts.PartSize, m.bundleOut != nil); err != nil {
			return nil, err
		}
		archive.sign = opts.Sign
		defer archive.close()
		m.layout = archive.staging
		if err := m.layout.checkBundleDestination(to, m.bundleOut != nil); err != nil {
			return nil, err
		}
	}
	var sum *Summary
	if m.layout != nil {
		sum, err = m.copyToLayout(ctx, images, errs)
		if err == nil && archive != nil {
			var res archiveResult
			res, err = archive.commit(ctx)
			sum.ArchiveBytes, sum.Parts, sum.PartsWritten = res.Bytes, res.Parts, res.Written
		}
		switch {
		case err != nil && archive != nil && m.applying():
			// Nothing to resume: the staging layout is the archive's
			// images unpacked, which the archive still holds.
			archive.discard()
		case err != nil && archive != nil && sum != nil:
			err = fmt.Errorf("%w (the completed images are kept in %s; run mirror again to resume)", err, archive.staging.dir)
		}
	} else {
		sum, err = m.copyToRegistry(ctx, images, errs)
	}
	return m.finish(sum, err, start)
}

// finish completes the summary.
func (m *mirrorer) finish(sum *Summary, err error, start time.Time) (*Summary, error) {
	if sum != nil {
		sum.Destination = m.to.String()
		sum.Duration = time.Since(start)
		sum.Seconds = sum.Duration.Round(time.Millisecond).Seconds()
		switch {
		case m.bundleOut != nil:
			sum.Bundle = BundleWritten
		case m.from != nil:
			sum.Bundle = BundleApplied
		}
		for _, o := range m.skip {
			sum.Omitted++
			sum.OmittedBytes += o.Size
		}
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
		src, err := newRegistrySource(ctx, opts.Registry)
		if err != nil {
			return nil, err
		}
		return withBuilt(src, opts.Built, nil, opts.Registry)
	}
	return openLayoutSource(opts.From, opts.Registry)
}

func (m *mirrorer) copyToLayout(ctx context.Context, images []*image, errs []error) (*Summary, error) {
	tasks, _ := blobTasks(images, m.skip)
	remaining := make([]int, len(images))
	for i, im := range images {
		if im == nil {
			continue
		}
		for _, b := range im.Blobs {
			if _, ok := m.skip[b.Digest]; !ok {
				remaining[i]++
			}
		}
	}
	if m.bundleOut != nil {
		// First, so that a layout with the file and an index.json that
		// does not name every image yet reads as an incomplete bundle.
		if err := m.layout.writeTopFile(BundleFile, m.bundleOut); err != nil {
			return nil, err
		}
	}
	p := m.opts.Progress
	m.startProgress(images, m.skip)

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

	if m.applying() {
		// A bundle is applied whole or not at all: index.json is not
		// touched unless every blob of every image verified, and the
		// blobs this run wrote go again.
		if err := failures(images, errs); err != nil {
			if uerr := m.layout.undoCreated(); uerr != nil {
				return nil, fmt.Errorf("%w (and undoing: %v)", err, uerr)
			}
			return nil, fmt.Errorf("%w; nothing of the bundle was applied", err)
		}
	}
	var ok []*image
	for i, im := range images {
		if done[i] {
			ok = append(ok, im)
		}
	}
	// Always written, so that even an empty plan leaves a valid layout;
	// entries of earlier runs are kept, but in a bundle, which names
	// exactly its images.
	if err := m.layout.setIndex(ok, m.bundleOut != nil); err != nil {
		return nil, err
	}
	if m.to.Transport == TransportDir {
		if err := m.layout.writeDirList(); err != nil {
			return nil, err
		}
	}
	sum.count(ok, m.leftOut())
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
