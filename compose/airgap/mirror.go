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

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/releases"
)

// Options configure Mirror and Footprint.
type Options struct {
	Registry registryclient.Options
	// Arch is the plan's arch: the platform taken out of an index.
	Arch releases.Arch
	// AllPlatforms copies every platform of an index.
	AllPlatforms bool
	// Progress follows the copy; nil reports nothing.
	Progress Progress
}

// Summary is what a mirror did.
type Summary struct {
	Destination string `json:"destination"`
	// Images are the images in the destination after the run.
	Images int `json:"images"`
	// Blobs are the unique config and layer blobs of those images.
	Blobs int `json:"blobs"`
	// Manifests are the manifests stored (indexes and image manifests).
	Manifests int `json:"manifests"`
	// Fetched is the blob bytes copied in this run.
	Fetched int64 `json:"bytes_fetched"`
	// Skipped is the blob bytes already present and verified.
	Skipped int64 `json:"bytes_skipped"`
	// Duration is the wall time of the run.
	Duration time.Duration `json:"-"`
	Seconds  float64       `json:"seconds"`
}

// Mirror copies every image of refs to the target: for the plan's arch
// only (an index keeps its digest and holds only that platform's manifest
// in an OCI layout), or every platform with AllPlatforms. Blobs shared by
// images are copied once. Failures of some images do not stop the others;
// the error names the first failed image and how many failed.
func Mirror(ctx context.Context, refs []string, to Target, opts Options) (*Summary, error) {
	start := time.Now()
	if opts.Progress == nil {
		opts.Progress = NopProgress{}
	}
	defer opts.Progress.Stop()
	m := &mirrorer{opts: opts, to: to, refs: refs}
	var err error
	if m.reader, err = newReader(ctx, opts.Registry, opts.Arch); err != nil {
		return nil, err
	}
	if to.Dir != "" {
		if m.layout, err = openLayout(to.Dir); err != nil {
			return nil, err
		}
		defer m.layout.close()
	}
	images, errs := m.resolveAll(ctx, refs)
	sum, err := m.copy(ctx, images, errs)
	if sum != nil {
		sum.Destination = to.String()
		sum.Duration = time.Since(start)
		sum.Seconds = sum.Duration.Round(time.Millisecond).Seconds()
	}
	return sum, err
}

type mirrorer struct {
	refs   []string
	opts   Options
	to     Target
	reader *reader
	layout *layout
}

// resolveAll reads every image's manifests, concurrently. errs[i] is set
// for an image that could not be read.
func (m *mirrorer) resolveAll(ctx context.Context, refs []string) ([]*image, []error) {
	images := make([]*image, len(refs))
	errs := make([]error, len(refs))
	var g errgroup.Group
	g.SetLimit(jobs(m.opts))
	for i, ref := range refs {
		g.Go(func() error {
			// A registry holds all of an index or none of it: a partial
			// index cannot be pushed, and a device pulls by the index
			// digest the release pins, so registry targets get it whole.
			whole := m.opts.AllPlatforms || m.layout == nil
			images[i], errs[i] = m.reader.resolve(ctx, ref, whole)
			if errs[i] == nil && m.layout == nil && !m.opts.AllPlatforms && images[i].Platforms > 1 {
				slog.Info("copying every platform of a multi-arch index to keep its digest (a registry cannot hold part of an index)", "image", ref, "platforms", images[i].Platforms)
			}
			return nil
		})
	}
	g.Wait()
	return images, errs
}

// blobTask is one unique blob: where to read it and which images need it.
type blobTask struct {
	desc   v1.Descriptor
	repo   name.Repository
	images []int
}

func (m *mirrorer) copy(ctx context.Context, images []*image, errs []error) (*Summary, error) {
	if m.layout != nil {
		return m.copyToLayout(ctx, images, errs)
	}
	return m.copyToRegistry(ctx, images, errs)
}

func (m *mirrorer) copyToLayout(ctx context.Context, images []*image, errs []error) (*Summary, error) {
	// Unique blobs, largest first so that the long copies start early.
	byDigest := map[v1.Hash]*blobTask{}
	var tasks []*blobTask
	remaining := make([]int, len(images))
	sizes := make([]ImageBytes, len(images))
	var total int64
	for i, im := range images {
		sizes[i].Ref = m.refs[i]
		if im == nil {
			continue
		}
		sizes[i].Bytes = im.Bytes()
		remaining[i] = len(im.Blobs)
		for _, b := range im.Blobs {
			t := byDigest[b.Digest]
			if t == nil {
				t = &blobTask{desc: b, repo: im.ref.Context()}
				byDigest[b.Digest] = t
				tasks = append(tasks, t)
				total += b.Size
			}
			t.images = append(t.images, i)
		}
	}
	slices.SortStableFunc(tasks, func(a, b *blobTask) int {
		if a.desc.Size != b.desc.Size {
			if a.desc.Size > b.desc.Size {
				return -1
			}
			return 1
		}
		return 0
	})
	p := m.opts.Progress
	p.Start(sizes, total)

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
	sum.count(ok)
	return sum, failures(images, errs)
}

// fetchBlob makes the blob present in the layout: verified if already
// there, else streamed from the registry (retried when the connection
// drops), reporting whether it was fetched.
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
	rc, err := m.reader.openBlob(ctx, t.repo, t.desc)
	if err != nil {
		return err
	}
	defer rc.Close()
	return m.layout.write(ctx, t.desc, rc, counted)
}

func describeBlob(t *blobTask, err error) error {
	if errors.Is(err, ErrDigestMismatch) {
		return fmt.Errorf("refusing blob from %s: %w", t.repo, err)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return fmt.Errorf("blob %s: %w in %s (404 Not Found): the registry lacks a blob the image's manifest references", t.desc.Digest, registryclient.ErrNotFound, t.repo)
	}
	return registryclient.Describe(t.repo.Digest(t.desc.Digest.String()).String(), err)
}

// copyToRegistry pushes each image with go-containerregistry, which streams
// blobs from the source registry (verifying them) and skips blobs the
// destination has. Present blobs are counted first, for the summary.
func (m *mirrorer) copyToRegistry(ctx context.Context, images []*image, errs []error) (*Summary, error) {
	sizes := make([]ImageBytes, len(images))
	var total int64
	seen := map[v1.Hash]bool{}
	for i, im := range images {
		sizes[i].Ref = m.refs[i]
		if im == nil {
			continue
		}
		sizes[i].Bytes = im.Bytes()
		for _, b := range im.Blobs {
			if !seen[b.Digest] {
				seen[b.Digest] = true
				total += b.Size
			}
		}
	}
	p := m.opts.Progress
	p.Start(sizes, total)
	sum := &Summary{}
	var mu sync.Mutex
	counted := map[v1.Hash]bool{}
	// One Pusher for every image: it uploads a blob once per destination
	// repository even when several images push it at the same time.
	// Separate pushers raced, and the registry could end up with a manifest
	// whose blob was not linked into the repository.
	pusher, err := remote.NewPusher(m.opts.Registry.Remote(ctx)...)
	if err != nil {
		return nil, err
	}
	var g errgroup.Group
	g.SetLimit(jobs(m.opts))
	for i, im := range images {
		if im == nil {
			p.Done(i, errs[i])
			continue
		}
		g.Go(func() error {
			err := m.push(ctx, pusher, im, i, func(d v1.Descriptor, present bool) {
				mu.Lock()
				defer mu.Unlock()
				if counted[d.Digest] {
					return
				}
				counted[d.Digest] = true
				if present {
					sum.Skipped += d.Size
				} else {
					sum.Fetched += d.Size
				}
			})
			if err != nil {
				errs[i] = err
			}
			p.Done(i, err)
			return nil
		})
	}
	g.Wait()
	var ok []*image
	for i, im := range images {
		if im != nil && errs[i] == nil {
			ok = append(ok, im)
		}
	}
	sum.count(ok)
	return sum, failures(images, errs)
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

func (m *mirrorer) push(ctx context.Context, pusher *remote.Pusher, im *image, i int, account func(v1.Descriptor, bool)) error {
	dstRepo, err := m.to.Repository(m.opts.Registry, im.ref.Context())
	if err != nil {
		return fmt.Errorf("%s: destination repository: %w", im.Ref, err)
	}
	dst := dstRepo.Digest(im.Top.Digest.String())
	// Count what the destination already has, for the summary.
	var present []bool
	for _, b := range im.Blobs {
		has := false
		if l, err := m.reader.puller.Layer(ctx, dstRepo.Digest(b.Digest.String())); err == nil {
			if e, ok := l.(interface{ Exists() (bool, error) }); ok {
				has, _ = e.Exists()
			}
		}
		present = append(present, has)
	}
	err = m.opts.Registry.Retry(ctx, func() error {
		switch {
		case im.desc.MediaType.IsIndex():
			idx, err := im.desc.ImageIndex()
			if err != nil {
				return err
			}
			return pusher.Push(ctx, dst, idx)
		default:
			img, err := im.desc.Image()
			if err != nil {
				return err
			}
			return pusher.Push(ctx, dst, img)
		}
	})
	if err != nil {
		return fmt.Errorf("copying %s: %w", im.Ref, registryclient.Describe(dst.String(), err))
	}
	for j, b := range im.Blobs {
		account(b, present[j])
		m.opts.Progress.Add(b.Size, []int{i})
	}
	return nil
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
