package rebase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/releases"
)

// Reason says, for machines, why an image failed a check.
type Reason string

// Reasons an image fails verify or tag resolution.
const (
	ReasonUnpinned     Reason = "unpinned"     // a tag, not a digest
	ReasonNotFound     Reason = "not-found"    // 404: no such manifest, tag or repository
	ReasonUnauthorized Reason = "unauthorized" // 401: no or wrong credentials
	ReasonForbidden    Reason = "forbidden"    // 403: credentials without access
	ReasonArchMissing  Reason = "arch-missing" // the image is not for the file's arch
	ReasonInvalid      Reason = "invalid"      // not an image (reference, media type, digest)
	ReasonError        Reason = "error"        // anything else: network, 5xx after retries
)

// ImageError is an image that failed a registry check.
type ImageError struct {
	Reason Reason
	Msg    string
}

func (e *ImageError) Error() string { return e.Msg }

// registry is the registry access of one command: one Puller, so that the
// requests to a repository share its token and connections, and a cache so
// that an image named by several files (x86_64 and aarch64 files often name
// the same multi-arch index) is fetched once.
type registry struct {
	opts   registryclient.Options
	puller *remote.Puller
	mu     sync.Mutex
	cache  map[string]*fetched
}

// fetched is what the registry said about one reference.
type fetched struct {
	once      sync.Once
	mediaType string
	digest    string
	index     *v1.IndexManifest // for an index
	config    *v1.ConfigFile    // for a single image
	err       *ImageError
}

func newRegistry(ctx context.Context, o registryclient.Options) (*registry, error) {
	p, err := remote.NewPuller(o.Remote(ctx)...)
	if err != nil {
		return nil, fmt.Errorf("setting up registry access: %w", err)
	}
	return &registry{opts: o, puller: p, cache: map[string]*fetched{}}, nil
}

// Inspection is what the registry says about a reference for one arch.
type Inspection struct {
	// MediaType of the manifest the reference names.
	MediaType string
	// Digest of that manifest (the index's, for an index).
	Digest string
	// PlatformDigest is the arch's image manifest: from the index, or the
	// manifest itself for a single image.
	PlatformDigest string
	// Detail says what was checked, for a person.
	Detail string
}

// inspect fetches the manifest ref names (verifying its digest when ref is
// pinned) and checks that it holds an image for arch: an index must list
// linux/<arch>; a single image's config must say arch, when it says any.
func (r *registry) inspect(ctx context.Context, ref string, arch releases.Arch) (Inspection, *ImageError) {
	r.mu.Lock()
	f, ok := r.cache[ref]
	if !ok {
		f = &fetched{}
		r.cache[ref] = f
	}
	r.mu.Unlock()
	f.once.Do(func() { r.fetch(ctx, ref, f) })
	in := Inspection{MediaType: f.mediaType, Digest: f.digest}
	if f.err != nil {
		return in, f.err
	}
	goarch := arch.GOARCH()
	if f.index != nil {
		var have []string
		nested := ""
		for _, m := range f.index.Manifests {
			if m.Platform == nil {
				continue
			}
			if m.Platform.OS == "linux" && m.Platform.Architecture == goarch && in.PlatformDigest == "" {
				// mirror copies one platform's image manifest, not an
				// index under a platform entry.
				if m.MediaType.IsImage() {
					in.PlatformDigest = m.Digest.String()
				} else if nested == "" {
					nested = m.Digest.String()
				}
			}
			p := m.Platform.OS + "/" + m.Platform.Architecture
			if m.Platform.Variant != "" {
				p += "/" + m.Platform.Variant
			}
			if !slices.Contains(have, p) {
				have = append(have, p)
			}
		}
		if in.PlatformDigest == "" && nested != "" {
			return in, &ImageError{ReasonInvalid, fmt.Sprintf("the index's linux/%s entry %s is not an image manifest (an index or another type), which mirror cannot copy for one platform", goarch, nested)}
		}
		if in.PlatformDigest == "" {
			return in, &ImageError{ReasonArchMissing, fmt.Sprintf("index has no linux/%s image (it has %s)", goarch, orNone(have))}
		}
		in.Detail = fmt.Sprintf("index, linux/%s %s", goarch, releases.ShortDigest(in.PlatformDigest))
		return in, nil
	}
	in.PlatformDigest = in.Digest
	cf := f.config
	if cf.Architecture == "" {
		in.Detail = "image, architecture not recorded"
		return in, nil
	}
	if cf.Architecture != goarch || (cf.OS != "" && cf.OS != "linux") {
		return in, &ImageError{ReasonArchMissing, fmt.Sprintf("image is %s/%s, not linux/%s", cf.OS, cf.Architecture, goarch)}
	}
	in.Detail = "image, linux/" + goarch
	return in, nil
}

// fetch reads the manifest of ref and, for a single image, its config.
func (r *registry) fetch(ctx context.Context, s string, f *fetched) {
	ref, err := r.opts.ParseReference(s)
	if err != nil {
		f.err = &ImageError{ReasonInvalid, fmt.Sprintf("invalid reference: %v", err)}
		return
	}
	desc, err := r.puller.Get(ctx, ref)
	if err != nil {
		f.err = classify(ref, err)
		return
	}
	f.mediaType, f.digest = string(desc.MediaType), desc.Digest.String()
	switch {
	case desc.MediaType.IsIndex():
		idx, err := desc.ImageIndex()
		if err != nil {
			f.err = classify(ref, err)
			return
		}
		if f.index, err = idx.IndexManifest(); err != nil {
			f.err = &ImageError{ReasonInvalid, fmt.Sprintf("reading index: %v", err)}
			return
		}
		f.err = r.children(ctx, ref.Context(), f.index, 1)
	case desc.MediaType.IsImage():
		img, err := desc.Image()
		if err != nil {
			f.err = classify(ref, err)
			return
		}
		// The config is a blob, read whole: a manifest announcing a huge
		// one must not make verify hold it.
		m, err := img.Manifest()
		if err != nil {
			f.err = &ImageError{ReasonInvalid, fmt.Sprintf("reading manifest: %v", err)}
			return
		}
		if m.Config.Size > registryclient.MaxMetadataSize {
			f.err = &ImageError{ReasonInvalid, fmt.Sprintf("the manifest's config is %d bytes, more than the %d an image config may have here", m.Config.Size, registryclient.MaxMetadataSize)}
			return
		}
		if f.config, err = img.ConfigFile(); err != nil {
			f.err = classify(ref, err)
		}
	default:
		f.err = &ImageError{ReasonInvalid, fmt.Sprintf("media type %s is not an image or an index", desc.MediaType)}
	}
}

// maxIndexDepth is how deep mirror follows nested indexes.
const maxIndexDepth = 4

// children checks what mirror needs of an index's manifests, since it
// copies every one of them to a registry: each is fetched by digest (its
// bytes checked against the digest, by go-containerregistry) and has the
// size the index gives; a nested index is checked the same way, as deep
// as mirror follows one. depth is idx's own depth (1 for the top).
func (r *registry) children(ctx context.Context, repo name.Repository, idx *v1.IndexManifest, depth int) *ImageError {
	for _, c := range idx.Manifests {
		what := "child manifest " + c.Digest.String()
		if c.Platform != nil {
			what += " (" + c.Platform.String() + ")"
		}
		if c.Digest.Algorithm != "sha256" || len(c.Digest.Hex) != 64 || c.Size < 0 {
			return &ImageError{ReasonInvalid, fmt.Sprintf("%s: not a sha256 digest with a size", what)}
		}
		desc, err := r.puller.Get(ctx, repo.Digest(c.Digest.String()))
		if err != nil {
			e := classify(repo.Digest(c.Digest.String()), err)
			e.Msg = what + ": " + e.Msg
			return e
		}
		if int64(len(desc.Manifest)) != c.Size {
			return &ImageError{ReasonInvalid, fmt.Sprintf("%s: the registry serves %d bytes, the index says %d", what, len(desc.Manifest), c.Size)}
		}
		switch {
		case desc.MediaType.IsIndex():
			if depth >= maxIndexDepth {
				return &ImageError{ReasonInvalid, fmt.Sprintf("%s: indexes nested deeper than %d", what, maxIndexDepth)}
			}
			nested, err := v1.ParseIndexManifest(bytes.NewReader(desc.Manifest))
			if err != nil {
				return &ImageError{ReasonInvalid, fmt.Sprintf("%s: reading index: %v", what, err)}
			}
			if e := r.children(ctx, repo, nested, depth+1); e != nil {
				return e
			}
		case desc.MediaType.IsImage():
		default:
			return &ImageError{ReasonInvalid, fmt.Sprintf("%s: media type %s is not an image or an index", what, desc.MediaType)}
		}
	}
	return nil
}

// classify turns a registry error into a reason and a message that says
// what to do about it.
func classify(ref name.Reference, err error) *ImageError {
	var te *transport.Error
	if errors.As(err, &te) {
		detail := ""
		if len(te.Errors) > 0 && te.Errors[0].Message != "" {
			detail = ": " + text.OneLine(te.Errors[0].Message)
		}
		reg := ref.Context().RegistryStr()
		switch te.StatusCode {
		case http.StatusNotFound:
			what := "manifest"
			if _, isTag := ref.(name.Tag); isTag {
				what = "tag"
			}
			return &ImageError{ReasonNotFound, fmt.Sprintf("%s not found (404)%s", what, detail)}
		case http.StatusUnauthorized:
			return &ImageError{ReasonUnauthorized, fmt.Sprintf("unauthorized (401)%s; log in with 'podman login %s'", detail, reg)}
		case http.StatusForbidden:
			return &ImageError{ReasonForbidden, fmt.Sprintf("access denied (403)%s; the credentials for %s cannot read %s", detail, reg, ref.Context().RepositoryStr())}
		}
		if te.StatusCode != 0 {
			return &ImageError{ReasonError, fmt.Sprintf("registry answered %d %s%s", te.StatusCode, http.StatusText(te.StatusCode), detail)}
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &ImageError{ReasonError, err.Error()}
	}
	msg := text.OneLine(err.Error())
	if strings.Contains(msg, "does not match requested digest") {
		return &ImageError{ReasonInvalid, msg}
	}
	return &ImageError{ReasonError, msg}
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "no platforms"
	}
	return strings.Join(list, ", ")
}
