package main

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
)

// checkImageFlag checks the image reference a flag names (--bootc-image,
// --bootc-base, --runner-image): registry/repository with a tag or digest,
// as podman, bootc and a Containerfile's FROM take it. A transport prefix
// (docker://, as skopeo and mirror --to write it) is no part of one: bootc
// switch and FROM cannot pull "docker://quay.io/…" as written.
func checkImageFlag(flag, ref string) error {
	if transport, rest, ok := strings.Cut(ref, "://"); ok && !strings.ContainsAny(transport, "/.:") {
		return usageError{fmt.Errorf("%s: %q starts with the transport %s://, which is no part of an image reference: give %s", flag, ref, transport, rest)}
	}
	if _, err := name.ParseReference(ref, name.StrictValidation); err != nil {
		return usageError{fmt.Errorf("%s: %q is not an image reference: %v", flag, ref, err)}
	}
	if err := imageref.Check(ref); err != nil {
		return usageError{fmt.Errorf("%s: %q: %v", flag, ref, err)}
	}
	return nil
}
