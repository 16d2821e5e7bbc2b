package airgap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

// SignatureRefs lists the sigstore signature attachments of the digest
// references among refs that their registries (or registries.conf
// mirrors, first) hold: REPO:sha256-HEX.sig, sorted. Mirror copies them as
// it copies images (by digest, and by the tag, to a registry), so that a
// registry loaded from the copy serves them where cosign and
// containers/image look. References without a digest have none.
func SignatureRefs(ctx context.Context, refs []string, reg registryclient.Options) ([]string, error) {
	found := make([]string, len(refs))
	errs := make([]error, len(refs))
	var g errgroup.Group
	g.SetLimit(jobsOf(reg))
	for i, ref := range refs {
		d, err := reg.ParseReference(ref)
		if err != nil {
			return nil, fmt.Errorf("parsing image reference %q: %w", ref, err)
		}
		dig, ok := d.(name.Digest)
		if !ok {
			continue
		}
		sigRef := dig.Context().Name() + ":" + SignatureTag(dig.DigestStr())
		g.Go(func() error {
			ok, err := hasTag(ctx, sigRef, reg)
			if ok {
				found[i] = sigRef
			}
			errs[i] = err
			return nil
		})
	}
	g.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("looking up signatures: %w", err)
	}
	var out []string
	for _, s := range found {
		if s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// hasTag reports whether any source of ref (registries.conf mirrors, then
// the registry) has it: a 404 is "no", other failures are errors.
func hasTag(ctx context.Context, ref string, reg registryclient.Options) (bool, error) {
	sources, err := reg.PullSources(ref)
	if err != nil {
		return false, err
	}
	var last error
	for _, s := range sources {
		err := reg.Retry(ctx, func() error {
			_, err := remote.Head(s.Ref, reg.Remote(ctx)...)
			return err
		})
		if err == nil {
			return true, nil
		}
		var te *transport.Error
		if errors.As(err, &te) && te.StatusCode == http.StatusNotFound {
			continue
		}
		if s.Mirror {
			continue
		}
		last = registryclient.Describe(ref, err)
	}
	return false, last
}
