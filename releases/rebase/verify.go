package rebase

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/releases"
)

// Check is the verdict on one image entry of a release file.
type Check struct {
	File      string        `json:"file"`
	Component string        `json:"component"`
	Arch      releases.Arch `json:"arch"`
	Key       string        `json:"key"`
	Ref       string        `json:"ref"`
	OK        bool          `json:"ok"`
	// Reason is set when the check failed.
	Reason Reason `json:"reason,omitempty"`
	// Message says what was found: the failure, or what was checked.
	Message string `json:"message"`
	// MediaType and Digest of the manifest, when the registry answered.
	MediaType string `json:"media_type,omitempty"`
	Digest    string `json:"digest,omitempty"`
}

// Verify checks every image of files against its registry: the reference
// is pinned by digest, the manifest exists (fetched by digest, so its bytes
// are verified against it), and it holds an image for the file's arch (an
// index lists linux/<arch>; a single image's config says that arch).
// Requests run concurrently (Registry.Jobs), each distinct reference and
// arch once. The checks come back in file order, one per image entry; an
// error is returned only when the checks could not run.
func Verify(ctx context.Context, files []*releases.File, o registryclient.Options) ([]Check, error) {
	reg, err := newRegistry(ctx, o)
	if err != nil {
		return nil, err
	}
	var checks []Check
	for _, f := range files {
		for _, im := range f.Images {
			checks = append(checks, Check{File: f.Name, Component: ComponentName(f), Arch: f.Arch, Key: im.Key, Ref: im.Ref})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobsOf(o))
	for i := range checks {
		c := &checks[i]
		if !releases.IsDigestPinned(c.Ref) {
			c.Reason, c.Message = ReasonUnpinned, "not pinned by digest: a tag can move, and an airgapped device cannot pull it"
			continue
		}
		g.Go(func() error {
			in, ierr := reg.inspect(gctx, c.Ref, c.Arch)
			c.MediaType, c.Digest = in.MediaType, in.Digest
			if ierr != nil {
				c.Reason, c.Message = ierr.Reason, ierr.Msg
				return nil
			}
			c.OK, c.Message = true, in.Detail
			return nil
		})
	}
	_ = g.Wait() // checks record their own failures
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("verifying images: %w", err)
	}
	return checks, nil
}

// Failed counts the failed checks.
func Failed(checks []Check) int {
	n := 0
	for _, c := range checks {
		if !c.OK {
			n++
		}
	}
	return n
}
