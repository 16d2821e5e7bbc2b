package airgap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

// copyToRegistry pushes the images to a registry, blob by blob, then their
// manifests. A blob several destination repositories need is uploaded
// once and mounted into the others (POST ?mount=&from=, as skopeo does),
// so shared base layers cross the wire once per registry; a blob a
// repository already has is skipped, and one another repository of the
// registry has (an earlier run) is mounted from it.
func (m *mirrorer) copyToRegistry(ctx context.Context, images []*image, errs []error) (*Summary, error) {
	reg := m.opts.Registry
	dst := make([]name.Repository, len(images))
	for i, im := range images {
		if im == nil {
			continue
		}
		repo, err := m.to.Repository(reg, im.ref.Context())
		if err != nil {
			errs[i], images[i] = fmt.Errorf("%s: destination repository: %w", im.Ref, err), nil
			continue
		}
		dst[i] = repo
	}
	p := m.opts.Progress
	m.startProgress(images, nil)
	pusher, err := remote.NewPusher(reg.Remote(ctx)...)
	if err != nil {
		return nil, fmt.Errorf("setting up registry access: %w", err)
	}
	puller, err := remote.NewPuller(reg.Remote(ctx)...)
	if err != nil {
		return nil, fmt.Errorf("setting up registry access: %w", err)
	}

	if m.from != nil {
		// Before anything is pushed: every blob the bundle leaves out is
		// in the destination repository, or in one it can be mounted from.
		if err := m.checkBaseRegistry(ctx, images, dst); err != nil {
			return nil, err
		}
	}
	tasks, _ := blobTasks(images, nil)
	var (
		mu      sync.Mutex
		sum     = &Summary{}
		blobErr = map[v1.Hash]error{}
	)
	var g errgroup.Group
	g.SetLimit(jobs(m.opts))
	for _, t := range tasks {
		g.Go(func() error {
			// The destination repositories, in the order of the images.
			var repos []name.Repository
			seen := map[string]bool{}
			for _, i := range t.images {
				if !seen[dst[i].String()] {
					seen[dst[i].String()] = true
					repos = append(repos, dst[i])
				}
			}
			st, err := m.pushBlob(ctx, pusher, puller, t, repos)
			mu.Lock()
			defer mu.Unlock()
			sum.Fetched += st.uploaded
			sum.Uploads += st.uploads
			sum.Mounted += int64(st.mounts) * t.desc.Size
			sum.Mounts += st.mounts
			if st.present == len(repos) {
				sum.Skipped += t.desc.Size
			}
			if err != nil {
				blobErr[t.desc.Digest] = describeBlob(t, err)
			}
			p.Add(t.desc.Size, t.images)
			return nil
		})
	}
	g.Wait()

	// Manifests, children before the index that lists them, once every
	// blob of the image is in place; the referrers after the images, one
	// at a time per subject: a registry without the referrers API gets
	// them through the subject's sha256-<hex> tag, which each push reads
	// and rewrites.
	var ok []*image
	var okMu sync.Mutex
	pushAll := func(list []int) error {
		for _, i := range list {
			err := m.pushManifests(ctx, pusher, images[i], dst[i], blobErr)
			if err != nil {
				errs[i] = err
			} else {
				okMu.Lock()
				ok = append(ok, images[i])
				okMu.Unlock()
			}
			p.Done(i, err)
		}
		return nil
	}
	var plain []int
	bySubject := map[string][]int{}
	var subjects []string
	for i, im := range images {
		switch {
		case im == nil:
			p.Done(i, errs[i])
		case im.Subject != nil:
			key := dst[i].String() + "@" + im.Subject.Digest.String()
			if bySubject[key] == nil {
				subjects = append(subjects, key)
			}
			bySubject[key] = append(bySubject[key], i)
		default:
			plain = append(plain, i)
		}
	}
	g = errgroup.Group{}
	g.SetLimit(jobs(m.opts))
	for _, i := range plain {
		g.Go(func() error { return pushAll([]int{i}) })
	}
	g.Wait()
	for _, key := range subjects {
		g.Go(func() error { return pushAll(bySubject[key]) })
	}
	g.Wait()
	sum.count(ok, nil)
	return sum, failures(images, errs)
}

type pushStats struct {
	uploaded                 int64
	uploads, mounts, present int
}

// pushBlob puts blob t into every repository of repos: skipped where it is,
// uploaded to the first that lacks it when none has it, mounted into the
// rest from one that has it.
func (m *mirrorer) pushBlob(ctx context.Context, pusher *remote.Pusher, puller *remote.Puller, t *blobTask, repos []name.Repository) (pushStats, error) {
	var st pushStats
	reg := m.opts.Registry
	has := make([]bool, len(repos))
	var mountFrom *name.Repository
	if r, ok := m.mountFrom[t.desc.Digest]; ok {
		mountFrom = &r // a blob the applied bundle leaves out
	}
	for i, repo := range repos {
		// With a pull-only token, some registries refuse to say anything
		// about a repository that does not exist yet: unknown is "not
		// there", and the upload's own check (with push access) decides.
		if m.present[repo.String()+"@"+t.desc.Digest.String()] {
			has[i] = true // found while checking the bundle's base
		} else {
			ok, err := blobExists(ctx, puller, repo, t.desc.Digest)
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			has[i] = ok && err == nil
		}
		if has[i] {
			st.present++
			if mountFrom == nil {
				mountFrom = &repos[i]
			}
		}
	}
	for i, repo := range repos {
		if has[i] {
			continue
		}
		l := &sourceLayer{desc: t.desc, open: func() (io.ReadCloser, error) { return m.src.openBlob(ctx, t.from, t.desc) }}
		var layer v1.Layer = l
		if mountFrom != nil {
			layer = &remote.MountableLayer{Layer: l, Reference: mountFrom.Digest(t.desc.Digest.String())}
		}
		err := reg.Retry(ctx, func() error { return pusher.Upload(ctx, repo, layer) })
		if n := l.read.Load(); n > 0 {
			st.uploads++
			st.uploaded += n
		} else if err == nil {
			st.mounts++
		}
		if err != nil {
			if errors.Is(l.err(), ErrDigestMismatch) {
				return st, l.err()
			}
			return st, fmt.Errorf("uploading to %s: %w", repo, err)
		}
		if mountFrom == nil {
			mountFrom = &repos[i]
		}
	}
	return st, nil
}

func blobExists(ctx context.Context, puller *remote.Puller, repo name.Repository, d v1.Hash) (bool, error) {
	l, err := puller.Layer(ctx, repo.Digest(d.String()))
	if err != nil {
		return false, err
	}
	e, ok := l.(interface{ Exists() (bool, error) })
	if !ok {
		return false, nil
	}
	return e.Exists()
}

// pushManifests puts the manifests of an image whose blobs are all in
// place, by digest (and by tag for a tag reference).
func (m *mirrorer) pushManifests(ctx context.Context, pusher *remote.Pusher, im *image, repo name.Repository, blobErr map[v1.Hash]error) error {
	for _, d := range im.Blobs {
		if err := blobErr[d.Digest]; err != nil {
			return fmt.Errorf("%s: %w", im.Ref, err)
		}
	}
	reg := m.opts.Registry
	for _, mb := range im.Manifests {
		ref := repo.Digest(mb.Digest.String())
		if err := reg.Retry(ctx, func() error { return pusher.Put(ctx, ref, rawManifest{mb}) }); err != nil {
			return fmt.Errorf("copying %s: %w", im.Ref, registryclient.Describe(ref.String(), err))
		}
	}
	if tag, ok := im.ref.(name.Tag); ok {
		ref := repo.Tag(tag.TagStr())
		if err := reg.Retry(ctx, func() error { return pusher.Put(ctx, ref, rawManifest{im.Top}) }); err != nil {
			return fmt.Errorf("copying %s: %w", im.Ref, registryclient.Describe(ref.String(), err))
		}
	}
	return nil
}

// rawManifest is a manifest pushed as the exact bytes read, so that its
// digest does not change.
type rawManifest struct{ m manifestBlob }

func (r rawManifest) RawManifest() ([]byte, error)        { return r.m.Data, nil }
func (r rawManifest) MediaType() (types.MediaType, error) { return r.m.MediaType, nil }

// sourceLayer is a blob streamed from the source into an upload, verified
// on the way: content that does not hash to its digest fails the upload
// before the registry commits it. read counts the bytes sent.
type sourceLayer struct {
	desc v1.Descriptor
	open func() (io.ReadCloser, error)
	read atomic.Int64

	mu      sync.Mutex
	lastErr error
}

var _ v1.Layer = (*sourceLayer)(nil)

func (l *sourceLayer) Digest() (v1.Hash, error)            { return l.desc.Digest, nil }
func (l *sourceLayer) Size() (int64, error)                { return l.desc.Size, nil }
func (l *sourceLayer) MediaType() (types.MediaType, error) { return l.desc.MediaType, nil }
func (l *sourceLayer) DiffID() (v1.Hash, error)            { return v1.Hash{}, errNotNeeded }
func (l *sourceLayer) Uncompressed() (io.ReadCloser, error) {
	return nil, errNotNeeded
}

var errNotNeeded = errors.New("not needed to copy a blob")

func (l *sourceLayer) Compressed() (io.ReadCloser, error) {
	rc, err := l.open()
	if err != nil {
		return nil, err
	}
	return &verifyReader{rc: rc, l: l, h: sha256.New()}, nil
}

func (l *sourceLayer) setErr(err error) {
	l.mu.Lock()
	l.lastErr = err
	l.mu.Unlock()
}

func (l *sourceLayer) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastErr
}

// verifyReader hashes a blob as it is read; at its end, content of the
// wrong size or digest is an error instead of io.EOF.
type verifyReader struct {
	rc io.ReadCloser
	l  *sourceLayer
	h  hash.Hash
	n  int64
}

func (v *verifyReader) Read(p []byte) (int, error) {
	n, err := v.rc.Read(p)
	if n > 0 {
		v.h.Write(p[:n])
		v.n += int64(n)
		v.l.read.Add(int64(n))
		if v.n > v.l.desc.Size {
			return n, v.fail(fmt.Errorf("blob %s: %w: more than the %d bytes its descriptor gives", v.l.desc.Digest, ErrDigestMismatch, v.l.desc.Size))
		}
	}
	if err == io.EOF {
		if v.n != v.l.desc.Size {
			return n, v.fail(fmt.Errorf("blob %s: %w: got %d bytes, want %d", v.l.desc.Digest, ErrDigestMismatch, v.n, v.l.desc.Size))
		}
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.l.desc.Digest.Hex {
			return n, v.fail(fmt.Errorf("blob %s: %w: got sha256:%s", v.l.desc.Digest, ErrDigestMismatch, got))
		}
	}
	return n, err
}

func (v *verifyReader) fail(err error) error {
	v.l.setErr(err)
	return err
}

func (v *verifyReader) Close() error { return v.rc.Close() }

// checkBaseRegistry checks that every blob the bundle leaves out is in the
// destination repository of each image that needs it, or in a repository
// of the registry it can be mounted from (another image's, or the base
// image's the bundle names); it records where to mount from.
func (m *mirrorer) checkBaseRegistry(ctx context.Context, images []*image, dst []name.Repository) error {
	if len(m.skip) == 0 {
		return nil
	}
	reg := m.opts.Registry
	puller, err := remote.NewPuller(reg.Remote(ctx)...)
	if err != nil {
		return fmt.Errorf("setting up registry access: %w", err)
	}
	// The destination repositories each blob is needed in.
	need := map[v1.Hash][]name.Repository{}
	for i, im := range images {
		if im == nil {
			continue
		}
		for _, d := range im.Blobs {
			if _, ok := m.skip[d.Digest]; ok && !slices.ContainsFunc(need[d.Digest], func(r name.Repository) bool { return r.String() == dst[i].String() }) {
				need[d.Digest] = append(need[d.Digest], dst[i])
			}
		}
	}
	var (
		mu      sync.Mutex
		missing []v1.Hash
	)
	m.mountFrom = map[v1.Hash]name.Repository{}
	m.present = map[string]bool{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobs(m.opts))
	for d, repos := range need {
		g.Go(func() error {
			// Every repository that needs it is asked (the push asks no
			// more); one that lacks it mounts it from one that has it, or
			// from the base image's repository.
			var from *name.Repository
			for _, r := range repos {
				ok, err := blobExists(gctx, puller, r, d)
				if gctx.Err() != nil {
					return gctx.Err()
				}
				if ok && err == nil {
					mu.Lock()
					m.present[r.String()+"@"+d.String()] = true
					mu.Unlock()
					if from == nil {
						from = &r
					}
				}
			}
			if from == nil {
				if in := m.skip[d].In; in != "" {
					if ref, err := reg.ParseReference(in); err == nil {
						if r, err := m.to.Repository(reg, ref.Context()); err == nil {
							if ok, err := blobExists(gctx, puller, r, d); ok && err == nil {
								from = &r
							}
						}
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if from == nil {
				missing = append(missing, d)
			} else {
				m.mountFrom[d] = *from
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("checking %s for the bundle's base: %w", m.to, err)
	}
	if len(missing) > 0 {
		return m.baseMissing(missing, images)
	}
	return nil
}
