// Package imageref is the check every image reference passes where it
// enters the tool (a release file, a lock, a payload or CSV, a flag such
// as --bootc-image, and the registry client before any request):
// go-containerregistry, which the tool pulls with, takes any run of
// [a-z0-9._-/] as a repository, so "quay.io/../../x" parses and its client
// would ask the registry for /v2/../../x/manifests/…. A reference must
// also be one in the grammar of the distribution reference (containers/image's
// docker/reference, what podman, CRI-O and the device's policy parse with),
// which has no empty, "." or ".." path segment.
//
// It is also where the tool parses references with go-containerregistry
// (ParseReference, NewRepository, NewTag, NewDigest, every caller's
// door): the version the tool is held at (v0.20, for osbuild/images'
// docker client) refuses a repository of one character,
// "registry.example.com/m:5.0", which the distribution grammar, podman
// and registries take; these parse it.
//
// It does not resolve references or know registries.
package imageref

import (
	"errors"
	"fmt"
	"strings"

	"github.com/containers/image/v5/docker/reference"
	"github.com/google/go-containerregistry/pkg/name"
)

// ErrPathSegment is wrapped when a repository path has an empty, "." or
// ".." segment.
var ErrPathSegment = errors.New("path segment")

// Check refuses a reference whose repository has an empty, "." or ".."
// path segment, or that the distribution grammar does not take. It does
// not ask for a registry, tag or digest: callers parse for those with
// go-containerregistry as before.
func Check(ref string) error {
	repo := ref
	if i := strings.IndexByte(repo, '@'); i >= 0 {
		repo = repo[:i]
	}
	// A tag follows the last colon after the last slash (a colon before
	// it is the registry's port).
	if i := strings.LastIndexByte(repo, ':'); i > strings.LastIndexByte(repo, '/') {
		repo = repo[:i]
	}
	for _, seg := range strings.Split(repo, "/") {
		switch seg {
		case ".", "..":
			return fmt.Errorf("%w %q in the repository: a registry would resolve it outside the repository", ErrPathSegment, seg)
		case "":
			return fmt.Errorf("empty %w in the repository", ErrPathSegment)
		}
	}
	if _, err := reference.ParseNormalizedNamed(ref); err != nil {
		return fmt.Errorf("not a reference containers/image takes: %v", err)
	}
	return nil
}

// ParseReference is go-containerregistry's name.ParseReference, but for a
// repository of one character, which it takes too. It does not Check ref:
// callers that ask a registry do.
func ParseReference(ref string, opts ...name.Option) (name.Reference, error) {
	r, err := name.ParseReference(ref, opts...)
	if err == nil {
		return r, nil
	}
	stand, repo, serr := standIn(ref, err)
	if stand == "" {
		return nil, serr
	}
	sr, serr := name.ParseReference(stand, opts...)
	if serr != nil {
		// Its message is generic ("could not parse reference") and
		// names ref, not the stand-in.
		return nil, err
	}
	rp := sr.Context().Registry.Repo(repo)
	if d, ok := sr.(name.Digest); ok {
		// A tag given with the digest is not kept: the digest names
		// the image.
		return rp.Digest(d.DigestStr()), nil
	}
	return rp.Tag(sr.Identifier()), nil
}

// NewTag is name.NewTag, but for a repository of one character.
func NewTag(ref string, opts ...name.Option) (name.Tag, error) {
	t, err := name.NewTag(ref, opts...)
	if err == nil {
		return t, nil
	}
	stand, repo, err := standIn(ref, err)
	if stand == "" {
		return name.Tag{}, err
	}
	st, err := name.NewTag(stand, opts...)
	if err != nil {
		return name.Tag{}, err
	}
	return st.Registry.Repo(repo).Tag(st.TagStr()), nil
}

// NewDigest is name.NewDigest, but for a repository of one character.
func NewDigest(ref string, opts ...name.Option) (name.Digest, error) {
	d, err := name.NewDigest(ref, opts...)
	if err == nil {
		return d, nil
	}
	stand, repo, err := standIn(ref, err)
	if stand == "" {
		return name.Digest{}, err
	}
	sd, err := name.NewDigest(stand, opts...)
	if err != nil {
		return name.Digest{}, err
	}
	return sd.Registry.Repo(repo).Digest(sd.DigestStr()), nil
}

// NewRepository is name.NewRepository, but for a repository of one
// character.
func NewRepository(repo string, opts ...name.Option) (name.Repository, error) {
	r, err := name.NewRepository(repo, opts...)
	if err == nil {
		return r, nil
	}
	stand, one, err := standIn(repo, err)
	if stand == "" {
		return name.Repository{}, err
	}
	sr, err := name.NewRepository(stand, opts...)
	if err != nil {
		return name.Repository{}, err
	}
	return sr.Registry.Repo(one), nil
}

// standIn is ref with its repository, when it is one character, written
// twice: a repository go-containerregistry takes, so that it checks the
// rest of ref (registry, tag, digest, strictness) as for any other; the
// reference is then rebuilt with the one character. The registry is the
// first path segment when it holds a '.' or ':', as go-containerregistry
// (and, but for localhost, the distribution grammar) reads it. When the
// repository is not one character, stand is "" and err is the parser's
// error, given; when it is one the grammar does not take, stand is "" and
// err says why.
func standIn(ref string, parseErr error) (stand, repo string, err error) {
	host, rest := "", ref
	if h, r, cut := strings.Cut(ref, "/"); cut && strings.ContainsAny(h, ".:") {
		host, rest = h+"/", r
	}
	if rest == "" || strings.ContainsRune("/:@", rune(rest[0])) || (len(rest) > 1 && rest[1] != ':' && rest[1] != '@') {
		return "", "", parseErr
	}
	if c := rest[0]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
		return "", "", fmt.Errorf("repository %q: a repository of one character is a lowercase letter or a digit", rest[:1])
	}
	return host + rest[:1] + rest, rest[:1], nil
}
