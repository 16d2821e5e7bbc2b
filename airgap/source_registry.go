package airgap

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/text"
)

// registrySource reads images from their registries, trying the mirrors
// registries.conf lists for a registry first, as podman and skopeo do.
// Manifests are read with one shared puller, blobs with one HTTP client per
// repository, so that auth is negotiated once per repository.
type registrySource struct {
	reg    registryclient.Options
	puller *remote.Puller

	mu      sync.Mutex
	clients map[string]*blobClient
}

var _ source = (*registrySource)(nil)

type blobClient struct {
	once   sync.Once
	client *http.Client
	err    error
}

func newRegistrySource(ctx context.Context, reg registryclient.Options) (*registrySource, error) {
	p, err := remote.NewPuller(reg.Remote(ctx)...)
	if err != nil {
		return nil, fmt.Errorf("setting up registry access: %w", err)
	}
	return &registrySource{reg: reg, puller: p, clients: map[string]*blobClient{}}, nil
}

func (r *registrySource) close() error { return nil }

// get reads the manifest ref names, retrying what the transport cannot
// (a body cut short). A digest reference is checked against the bytes.
func (r *registrySource) get(ctx context.Context, ref name.Reference) (manifestBlob, error) {
	var desc *remote.Descriptor
	err := r.reg.Retry(ctx, func() error {
		var err error
		desc, err = r.puller.Get(ctx, ref)
		return err
	})
	if err != nil {
		return manifestBlob{}, err
	}
	want := desc.Digest
	if d, ok := ref.(name.Digest); ok {
		if want, err = v1.NewHash(d.DigestStr()); err != nil {
			return manifestBlob{}, err
		}
	}
	if err := verifyManifest(desc.Manifest, want); err != nil {
		return manifestBlob{}, err
	}
	if want != desc.Digest {
		return manifestBlob{}, fmt.Errorf("manifest %s: %w: the registry says it is %s", want, ErrDigestMismatch, desc.Digest)
	}
	return manifestBlob{Digest: want, MediaType: desc.MediaType, Data: desc.Manifest}, nil
}

func (r *registrySource) top(ctx context.Context, refStr string) (*image, error) {
	ref, err := r.reg.ParseReference(refStr)
	if err != nil {
		return nil, fmt.Errorf("parsing image reference %q: %w", refStr, err)
	}
	sources, err := r.reg.PullSources(refStr)
	if err != nil {
		return nil, err
	}
	var mirrorErrs []string
	for _, s := range sources {
		m, err := r.get(ctx, s.Ref)
		if err == nil {
			repo := s.Ref.Context()
			return &image{Ref: refStr, ref: ref, from: &repo, Top: m}, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if s.Mirror {
			mirrorErrs = append(mirrorErrs, fmt.Sprintf("%s: %s", s.Ref.Context(), text.OneLine(err.Error())))
			continue
		}
		err = registryclient.Describe(refStr, err)
		if len(mirrorErrs) > 0 {
			err = fmt.Errorf("%w (the registries.conf mirrors failed too: %s)", err, strings.Join(mirrorErrs, "; "))
		}
		return nil, err
	}
	// registries.conf lists the registry's own location last; a
	// configuration without it (a mirror-only entry) ends here.
	return nil, fmt.Errorf("%s: every registries.conf source failed: %s", refStr, strings.Join(mirrorErrs, "; "))
}

func (r *registrySource) child(ctx context.Context, im *image, d v1.Descriptor) (manifestBlob, error) {
	return r.get(ctx, im.from.Digest(d.Digest.String()))
}

func (r *registrySource) openBlob(ctx context.Context, im *image, d v1.Descriptor) (io.ReadCloser, error) {
	repo := *im.from
	r.mu.Lock()
	c := r.clients[repo.String()]
	if c == nil {
		c = &blobClient{}
		r.clients[repo.String()] = c
	}
	r.mu.Unlock()
	c.once.Do(func() {
		var rt http.RoundTripper
		if rt, c.err = r.reg.PullTransport(ctx, repo); c.err == nil {
			c.client = &http.Client{Transport: rt}
		}
	})
	if c.err != nil {
		return nil, c.err
	}
	u := url.URL{Scheme: repo.Scheme(), Host: repo.RegistryStr(), Path: "/v2/" + repo.RepositoryStr() + "/blobs/" + d.Digest.String()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	if err := transport.CheckError(resp, http.StatusOK); err != nil {
		resp.Body.Close()
		return nil, err
	}
	if resp.ContentLength >= 0 && resp.ContentLength != d.Size {
		resp.Body.Close()
		return nil, fmt.Errorf("blob %s: %w: the registry sends %d bytes, the manifest says %d", d.Digest, ErrDigestMismatch, resp.ContentLength, d.Size)
	}
	return resp.Body, nil
}
