package airgap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/releases"
)

// planBundle works out the differential bundle to write: what the bases
// reach, read from the source (a lock's images) or from the base layouts
// themselves; the config and layer blobs of the new images that the bases
// reach are left out. Every image must have been read: a bundle names
// every image of the plan or is not written.
func (m *mirrorer) planBundle(ctx context.Context, images []*image, errs []error) error {
	if err := failures(images, errs); err != nil {
		return err
	}
	bo := m.opts.Bundle
	if len(bo.Since) == 0 {
		return errors.New("a differential bundle needs at least one base")
	}
	base := NewReach()
	var bases []BundleBase
	for _, b := range bo.Since {
		if b.Layout.Transport != "" {
			s, err := openLayoutStore(b.Layout, m.opts.Registry)
			if err != nil {
				return fmt.Errorf("reading the base %s: %w", b.Layout, err)
			}
			r, err := s.reach(ctx, true)
			entries, digest, bundle := len(s.entries), s.indexDigest, s.bundle
			s.close()
			if err != nil {
				return fmt.Errorf("reading the base %s: %w", b.Layout, err)
			}
			if err := checkBundleArch(bundle, m.opts.Arch, b.Layout); err != nil {
				return fmt.Errorf("--since %w", err)
			}
			bb := BundleBase{Index: digest.String(), Images: entries}
			if bundle != nil {
				bb.Compositions = bundle.Compositions
			}
			bases = append(bases, bb)
			base.Union(r)
			continue
		}
		if b.Arch != "" && m.opts.Arch != "" && b.Arch != m.opts.Arch {
			return fmt.Errorf("--since %s: %w: it is a plan for %s, this bundle is for %s; a base must be what the same devices hold", b.Name, ErrOtherArch, b.Arch, m.opts.Arch)
		}
		// The base's images as the site holds them (siteHolds), not as
		// this destination gets them: a bundle written to an archive
		// carries every platform, and the site that applies it may hold
		// one.
		arch := b.Arch
		if arch == "" {
			arch = m.opts.Arch
		}
		sel := m.selection()
		if arch != "" {
			sel = siteHolds(arch)
		}
		imgs, err := resolveEach(ctx, m.src, b.Refs, sel, jobs(m.opts))
		if err != nil {
			return fmt.Errorf("reading the base %s: %w", b.Name, err)
		}
		bases = append(bases, BundleBase{Composition: b.Composition, Image: b.Image, Images: len(b.Refs)})
		base.Union(reachOf(imgs))
	}
	m.skip = map[v1.Hash]OmittedBlob{}
	for _, im := range images {
		for _, d := range im.Blobs {
			if r, ok := base.Get(d.Digest); ok && r.Size == d.Size {
				m.skip[d.Digest] = OmittedBlob{Digest: d.Digest.String(), Size: d.Size, In: r.Image}
			}
		}
	}
	extra := map[string]bool{}
	for _, r := range bo.Extra {
		extra[r] = true
	}
	out := &Bundle{Schema: bundleSchema, Arch: string(m.opts.Arch), Compositions: slices.Clone(bo.Compositions), Base: bases}
	slices.Sort(out.Compositions)
	out.Compositions = slices.Compact(out.Compositions)
	seen := map[string]bool{}
	for _, im := range images {
		if !seen[im.Ref] {
			seen[im.Ref] = true
			out.Images = append(out.Images, BundleImage{Ref: im.Ref, Digest: im.Top.Digest.String(), Extra: extra[im.Ref]})
		}
	}
	return m.setBundleOut(out)
}

// siteHolds is what a site holds of the images of a plan for arch: the
// plan arch's platform of each index, what mirror --lock --to oci: writes
// and the least any site holds. A lock's (or an image's) base is taken as
// that, whatever the bundle's destination carries (an archive carries
// every platform of the new images): what the bundle leaves out is then
// what such a site holds, and applying it demands of the site exactly
// that (planApply takes the demand from the bundle's list).
func siteHolds(arch releases.Arch) selection { return selection{arch: arch} }

// setBundleOut sorts the bundle's lists, adds the omitted blobs (m.skip)
// and encodes it.
func (m *mirrorer) setBundleOut(b *Bundle) error {
	sort.Slice(b.Images, func(i, j int) bool { return b.Images[i].Ref < b.Images[j].Ref })
	b.Omitted, b.OmittedBytes = nil, 0
	for _, o := range m.skip {
		b.Omitted = append(b.Omitted, o)
		b.OmittedBytes += o.Size
	}
	sort.Slice(b.Omitted, func(i, j int) bool { return b.Omitted[i].Digest < b.Omitted[j].Digest })
	data, err := b.encode()
	if err != nil {
		return err
	}
	// What is written is what the far side reads: parse it back.
	if _, err := ParseBundle(BundleFile, data); err != nil {
		return err
	}
	m.bundleOut = data
	return nil
}

// planBundleCopy prepares copying the source bundle into a new archive
// (re-cut into parts, or joined): the same bundle, for the images copied.
func (m *mirrorer) planBundleCopy(images []*image, errs []error) error {
	if err := failures(images, errs); err != nil {
		return err
	}
	if err := m.planApply(images); err != nil {
		return err
	}
	b := *m.from
	b.Images = nil
	byRef := map[string]BundleImage{}
	for _, im := range m.from.Images {
		byRef[im.Ref] = im
	}
	seen := map[string]bool{}
	for _, im := range images {
		if !seen[im.Ref] {
			seen[im.Ref] = true
			b.Images = append(b.Images, byRef[im.Ref])
		}
	}
	return m.setBundleOut(&b)
}

// planApply takes the blobs the source bundle leaves out that the images
// reach (the destination must hold them), and checks that every other
// blob of the images is in the bundle: a bundle that lacks a blob it does
// not list as left out is damaged, and refused before anything is written.
func (m *mirrorer) planApply(images []*image) error {
	omitted := m.from.omittedSet()
	ls := m.src.(*layoutSource)
	m.skip = map[v1.Hash]OmittedBlob{}
	for _, im := range images {
		if im == nil {
			continue
		}
		for _, d := range im.Blobs {
			if o, ok := omitted[d.Digest]; ok && o.Size == d.Size {
				m.skip[d.Digest] = o
				continue
			}
			rc, size, err := ls.store.open(d.Digest)
			if err != nil {
				if errors.Is(err, errMissing) {
					return fmt.Errorf("%s: %w: %s needs blob %s, which the bundle neither holds nor lists as left out", ls.desc, ErrBadBundle, im.Ref, d.Digest)
				}
				return fmt.Errorf("%s: %w", ls.desc, err)
			}
			rc.Close()
			if size != d.Size {
				return fmt.Errorf("%s: blob %s: %w: %d bytes, the manifest of %s says %d", ls.desc, d.Digest, ErrDigestMismatch, size, im.Ref, d.Size)
			}
		}
	}
	return nil
}

// needer maps each left-out blob to the first image (in the plan's order)
// that needs it.
func (m *mirrorer) needer(images []*image) map[v1.Hash]string {
	out := map[v1.Hash]string{}
	for _, im := range images {
		if im == nil {
			continue
		}
		for _, d := range im.Blobs {
			if _, ok := m.skip[d.Digest]; ok {
				if _, seen := out[d.Digest]; !seen {
					out[d.Digest] = im.Ref
				}
			}
		}
	}
	return out
}

// baseMissing is the one-line refusal of a bundle whose base the
// destination lacks: the first missing blob (by digest), an image that
// needs it, how many more are missing, and what the base was.
func (m *mirrorer) baseMissing(missing []v1.Hash, images []*image) error {
	slices.SortFunc(missing, compareHex)
	d := missing[0]
	o := m.skip[d]
	more := ""
	if len(missing) > 1 {
		more = fmt.Sprintf(" (and %d more of the %d blobs it leaves out)", len(missing)-1, len(m.skip))
	}
	return fmt.Errorf("%w: blob %s (%d bytes), which %s needs, is not there%s; the bundle %s was made against %s: mirror that to the destination first, then the bundle",
		ErrBaseMissing, d, o.Size, m.needer(images)[d], more, m.opts.From, m.from.describeBase())
}

// checkBaseBeforeOpen refuses, before the destination layout is created,
// a bundle that leaves out blobs when the destination holds no layout.
func (m *mirrorer) checkBaseBeforeOpen(dir string, images []*image) error {
	if len(m.skip) == 0 {
		return nil
	}
	if st, err := os.Stat(filepath.Join(dir, layoutFile)); err == nil && st.Mode().IsRegular() {
		return nil
	}
	missing := make([]v1.Hash, 0, len(m.skip))
	for d := range m.skip {
		missing = append(missing, d)
	}
	return m.baseMissing(missing, images)
}

// checkBaseLayout checks, under the layout's lock, that the destination
// holds every blob the bundle leaves out: present, the right size, and
// hashing to its digest. A damaged one counts as missing and is left as
// it is.
func (m *mirrorer) checkBaseLayout(ctx context.Context, images []*image) error {
	store, err := openDirStore(m.layout.dir)
	if err != nil {
		return err
	}
	if err := m.checkBaseStore(ctx, store, images); err != nil {
		return err
	}
	for d := range m.skip {
		m.layout.markVerified(d)
	}
	return nil
}

// checkBaseArchive checks an archive destination (the site's images in
// one file, split or not, or the staging layout of an unfinished run)
// before it is opened for writing.
func (m *mirrorer) checkBaseArchive(ctx context.Context, file string, images []*image) error {
	if len(m.skip) == 0 {
		return nil
	}
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	var store blobStore
	var err error
	switch {
	case exists(file):
		store, err = openArchiveStore(file)
	case exists(file + PartsSuffix):
		store, err = openArchiveStore(file + PartsSuffix)
	case exists(filepath.Join(stagingDir(file), layoutFile)):
		store, err = openDirStore(stagingDir(file))
	default:
		return m.checkBaseBeforeOpen(file, images)
	}
	if err != nil {
		return err
	}
	defer store.close()
	return m.checkBaseStore(ctx, store, images)
}

// checkBaseStore hashes every left-out blob in store, concurrently.
func (m *mirrorer) checkBaseStore(ctx context.Context, store blobStore, images []*image) error {
	var (
		mu      sync.Mutex
		missing []v1.Hash
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobs(m.opts))
	for d, o := range m.skip {
		g.Go(func() error {
			ok, err := storeHolds(gctx, store, d, o.Size)
			if err != nil {
				return err
			}
			if !ok {
				mu.Lock()
				missing = append(missing, d)
				mu.Unlock()
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

// storeHolds reports whether store has blob d of size bytes with that
// digest.
func storeHolds(ctx context.Context, store blobStore, d v1.Hash, size int64) (bool, error) {
	rc, n, err := store.open(d)
	if errors.Is(err, errMissing) || errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer rc.Close()
	if n != size {
		return false, nil
	}
	h := sha256.New()
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	if _, err := io.CopyBuffer(h, ctxReader{ctx, rc}, *bp); err != nil {
		return false, err
	}
	return hex.EncodeToString(h.Sum(nil)) == d.Hex, nil
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
