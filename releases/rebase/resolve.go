package rebase

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	"golang.org/x/sync/errgroup"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/releases"
)

// Unresolved is a tag reference ResolveTags could not resolve, and why.
type Unresolved struct {
	File, Key, Ref string
	Err            *ImageError
}

func (u Unresolved) String() string {
	return fmt.Sprintf("%s image %q: %s: %s", u.File, u.Key, u.Ref, u.Err.Msg)
}

// ResolveTags asks the registries for the digest of every tag reference of
// files (release fetch, for a build whose release files name images by
// tag): the digest the tag names now, an index's for a multi-arch image
// (one reference serves both arches' files), after checking that it holds
// an image for the arch of each file naming it. It returns tag reference ->
// repository@digest for the tags that resolved, and the others, in file
// order.
func ResolveTags(ctx context.Context, files []*releases.File, o registryclient.Options) (map[string]string, []Unresolved, error) {
	type job struct {
		file *releases.File
		key  string
		ref  string
		out  string
		err  *ImageError
	}
	var jobs []*job
	for _, f := range files {
		for _, im := range f.Images {
			if !releases.IsDigestPinned(im.Ref) {
				jobs = append(jobs, &job{file: f, key: im.Key, ref: im.Ref})
			}
		}
	}
	if len(jobs) == 0 {
		return map[string]string{}, nil, nil
	}
	reg, err := newRegistry(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobsOf(o))
	for _, j := range jobs {
		g.Go(func() error {
			in, ierr := reg.inspect(gctx, j.ref, j.file.Arch)
			if ierr != nil {
				j.err = ierr
				return nil
			}
			ref, err := imageref.ParseReference(j.ref, name.StrictValidation)
			if err != nil {
				j.err = &ImageError{ReasonInvalid, err.Error()}
				return nil
			}
			j.out = ref.Context().Name() + "@" + in.Digest
			return nil
		})
	}
	_ = g.Wait() // jobs record their own errors
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	resolved := map[string]string{}
	var failed []Unresolved
	for _, j := range jobs {
		if j.err == nil {
			resolved[j.ref] = j.out
		}
	}
	for _, j := range jobs {
		if j.err != nil {
			// A tag one arch's file could not use is no tag to pin.
			delete(resolved, j.ref)
			if !slices.ContainsFunc(failed, func(u Unresolved) bool { return u.File == j.file.Name && u.Key == j.key }) {
				failed = append(failed, Unresolved{File: j.file.Name, Key: j.key, Ref: j.ref, Err: j.err})
			}
		}
	}
	return resolved, failed, nil
}
