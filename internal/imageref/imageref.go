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
// It checks strings; it does not parse references for use, resolve them or
// know registries.
package imageref

import (
	"errors"
	"fmt"
	"strings"

	"github.com/containers/image/v5/docker/reference"
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
