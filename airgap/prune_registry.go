package airgap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// RegistryReport is what prune says of a registry a mirror filled: what
// the kept compositions still need there, and what else it holds that the
// distribution API shows. It removes nothing: deleting manifests and
// collecting their blobs is the registry's own garbage collection.
type RegistryReport struct {
	Registry   string `json:"registry"`
	KeptImages int    `json:"kept_images"`
	// Missing are kept images the registry does not serve whole (their
	// source references), with why.
	Missing []MissingImage `json:"missing"`
	// Repositories are those under the prefix that hold a tag no kept
	// image has, or that no kept image lives in.
	Repositories []RegistryRepository `json:"repositories"`
	// Reclaimable is the bytes of the blobs and manifests those tags
	// reach that no kept image does: what deleting them and a garbage
	// collection would free, at least (manifests pushed by digest only
	// are not listed by the API).
	Reclaimable int64 `json:"bytes_reclaimable"`
	// Scanned is how many repositories under the prefix the catalog
	// lists: in any of them, manifests pushed by digest (untagged, as
	// mirror pushes) of images no kept lock names may remain, which the
	// distribution API cannot list and Reclaimable does not count.
	Scanned int `json:"repositories_scanned"`
}

// MissingImage is a kept image the registry lacks.
type MissingImage struct {
	Ref    string `json:"ref"`
	Reason string `json:"reason"`
}

// RegistryRepository is a repository with something no kept image is.
type RegistryRepository struct {
	Name string `json:"name"`
	// Kept is set when a kept image lives in it.
	Kept bool `json:"kept"`
	// Tags are its tags that are neither a kept image's nor attached to
	// one (cosign's sha256-HEX.sig, .att and .sbom tags and the referrers
	// tag sha256-HEX of a kept manifest, and of what is attached to it,
	// stay).
	Tags []string `json:"tags"`
	// UntaggedOnly is set when the repository has no tag at all: the
	// catalog lists it, so it holds manifests pushed by digest only,
	// which the API cannot list (nor their bytes).
	UntaggedOnly bool `json:"untagged_only"`
}

// PruneRegistryReport reads what the kept images need from the registry
// of target (docker://REGISTRY/PREFIX, where mirror pushed them) and lists
// the repositories under PREFIX (the catalog API) and their tags that no
// kept image has, with the bytes only they reach. Untagged manifests are
// beyond it: the distribution API lists tags, not manifests, so images no
// kept lock names that were pushed by digest (as mirror pushes) may remain
// in any repository scanned; a repository without tags is marked, as it
// holds nothing else.
func PruneRegistryReport(ctx context.Context, target Target, keep []Kept, opts PruneOptions) (*RegistryReport, error) {
	if target.Transport != TransportDocker {
		return nil, fmt.Errorf("%w %q: a registry report reads docker://REGISTRY/PREFIX", ErrBadDestination, target)
	}
	reg := opts.Registry
	refs, owner, err := keptRefs(keep)
	if err != nil {
		return nil, err
	}
	src, err := newRegistrySource(ctx, reg)
	if err != nil {
		return nil, err
	}
	rep := &RegistryReport{Registry: target.String(), KeptImages: len(refs), Missing: []MissingImage{}, Repositories: []RegistryRepository{}}
	keptTags := map[string]map[string]bool{} // repository -> tags
	var mirrored []string
	for _, r := range refs {
		ref, err := reg.ParseReference(r)
		if err != nil {
			return nil, fmt.Errorf("%s: parsing image reference %q: %w", owner[r], r, err)
		}
		repo, err := target.Repository(reg, ref.Context())
		if err != nil {
			return nil, fmt.Errorf("%s: %s in %s: %w", owner[r], r, target, err)
		}
		tags := keptTags[repo.RepositoryStr()]
		if tags == nil {
			tags = map[string]bool{}
			keptTags[repo.RepositoryStr()] = tags
		}
		switch x := ref.(type) {
		case name.Digest:
			mirrored = append(mirrored, repo.Digest(x.DigestStr()).String())
		case name.Tag:
			tags[x.TagStr()] = true
			mirrored = append(mirrored, repo.Tag(x.TagStr()).String())
		}
	}
	kept := NewReach()
	// keptManifests are the kept images' manifests, "REPO@DIGEST" with
	// REPO the registry's repository path: what is attached to them
	// stays (attached.go).
	keptManifests := map[string]bool{}
	for i, m := range mirrored {
		im, err := resolve(ctx, src, m, selection{whole: true})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			rep.Missing = append(rep.Missing, MissingImage{Ref: refs[i], Reason: err.Error()})
			continue
		}
		kept.Union(reachOf([]*image{im}))
		for _, mb := range im.Manifests {
			keptManifests[im.ref.Context().RepositoryStr()+"@"+mb.Digest.String()] = true
		}
	}
	// The registry as the options reach it (plain HTTP only where allowed).
	anyRepo, err := reg.ParseRepository(target.Registry + "/catalog")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, err)
	}
	registry := anyRepo.Registry
	var catalog []string
	err = reg.Retry(ctx, func() error {
		var err error
		catalog, err = remote.Catalog(ctx, registry, reg.Remote(ctx)...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the repositories of %s (the registry's catalog API): %w", target.Registry, err)
	}
	slices.Sort(catalog)
	other := NewReach()
	for _, path := range catalog {
		if target.Prefix != "" && path != target.Prefix && !strings.HasPrefix(path, target.Prefix+"/") {
			continue
		}
		repo, err := reg.ParseRepository(target.Registry + "/" + path)
		if err != nil {
			continue // a name the registry allows and references do not
		}
		rep.Scanned++
		var tags []string
		err = reg.Retry(ctx, func() error {
			var err error
			tags, err = remote.List(repo, reg.Remote(ctx)...)
			return err
		})
		var terr *transport.Error
		if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
			// distribution answers NAME_UNKNOWN for a repository of
			// untagged manifests only (what mirror pushes by digest).
			tags, err = nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("listing the tags of %s: %w", repo, err)
		}
		slices.Sort(tags)
		rr := RegistryRepository{Name: path, Kept: keptTags[path] != nil, Tags: []string{}, UntaggedOnly: len(tags) == 0}
		var (
			images []*image
			cands  []candidate
		)
		for _, tag := range tags {
			if keptTags[path][tag] {
				continue
			}
			im, err := resolve(ctx, src, repo.Tag(tag).String(), selection{whole: true})
			if err != nil {
				return nil, fmt.Errorf("reading %s:%s: %w", repo, tag, err)
			}
			c := candidate{Repo: path, Tag: tag, Digest: im.Top.Digest.String()}
			if im.Subject != nil {
				c.Subject = im.Subject.Digest.String()
			}
			if im.Top.MediaType.IsIndex() {
				if idx, err := v1.ParseIndexManifest(bytes.NewReader(im.Top.Data)); err == nil {
					for _, d := range idx.Manifests {
						c.Lists = append(c.Lists, d.Digest.String())
					}
				}
			}
			images, cands = append(images, im), append(cands, c)
		}
		for i, attached := range attachedTo(keptManifests, cands) {
			if attached {
				kept.Union(reachOf(images[i : i+1]))
				continue
			}
			rr.Tags = append(rr.Tags, cands[i].Tag)
			other.Union(reachOf(images[i : i+1]))
		}
		if !rr.Kept || len(rr.Tags) > 0 {
			rep.Repositories = append(rep.Repositories, rr)
		}
	}
	for _, b := range other.Blobs() {
		if !kept.Has(b.Digest) {
			rep.Reclaimable += b.Size
		}
	}
	return rep, nil
}
