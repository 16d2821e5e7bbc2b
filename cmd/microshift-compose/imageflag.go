package main

import (
	"fmt"
	"strings"

	"github.com/containers/image/v5/docker/reference"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
)

// checkImageFlag checks the image reference a flag names (--bootc-image,
// --bootc-base): registry/repository with a tag or digest, as podman, bootc
// and a Containerfile's FROM take it.
func checkImageFlag(flag, ref string) error {
	if err := checkNoTransport(flag, ref); err != nil {
		return err
	}
	// Path segments first: they are what a parser's "invalid reference
	// format" would not name.
	if err := imageref.Check(ref); err != nil {
		return usageError{fmt.Errorf("%s: %q: %v", flag, ref, err)}
	}
	if _, err := imageref.ParseReference(ref, name.StrictValidation); err != nil {
		return usageError{fmt.Errorf("%s: %q is not an image reference: %v", flag, ref, err)}
	}
	return nil
}

// checkRunnerImage checks --runner-image as the node's runtime parses it
// (containers/image: localhost/NAME is an image 'make image' built, on the
// node), with its registry, and, as checkImageFlag does, for transports
// and path segments.
func checkRunnerImage(ref string) error {
	const flag = "--runner-image"
	if err := checkNoTransport(flag, ref); err != nil {
		return err
	}
	if err := imageref.Check(ref); err != nil {
		return usageError{fmt.Errorf("%s: %q: %v", flag, ref, err)}
	}
	if _, err := reference.ParseNamed(ref); err != nil {
		return usageError{fmt.Errorf("%s: %q is not an image reference with its registry: %v", flag, ref, err)}
	}
	return nil
}

// checkNoTransport refuses a transport prefix (docker://, as skopeo and
// mirror --to write it): it is no part of an image reference, and bootc
// switch, FROM and a Tekton step cannot pull "docker://quay.io/…" as
// written.
func checkNoTransport(flag, ref string) error {
	if transport, rest, ok := strings.Cut(ref, "://"); ok && !strings.ContainsAny(transport, "/.:") {
		return usageError{fmt.Errorf("%s: %q starts with the transport %s://, which is no part of an image reference: give %s", flag, ref, transport, rest)}
	}
	return nil
}
