package airgap

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
)

// ErrBadDestination is wrapped by ParseDestination's errors.
var ErrBadDestination = errors.New("invalid destination")

// Target is a parsed --to: an OCI image layout directory or a registry
// prefix, exactly one of Dir and Registry set.
type Target struct {
	// Dir is the OCI image layout directory of oci:DIR.
	Dir string
	// Registry is the host[:port] of docker://REGISTRY/PREFIX.
	Registry string
	// Prefix is the repository path every image goes under ("" for none).
	Prefix string
}

// ParseDestination parses oci:DIR or docker://REGISTRY[/PREFIX].
func ParseDestination(s string) (Target, error) {
	bad := func(format string, args ...any) (Target, error) {
		return Target{}, fmt.Errorf("%w %q: %s", ErrBadDestination, s, fmt.Sprintf(format, args...))
	}
	switch {
	case strings.HasPrefix(s, "oci:"):
		dir := strings.TrimPrefix(s, "oci:")
		if dir == "" {
			return bad("no directory after oci: (want oci:DIR)")
		}
		if strings.Contains(dir, ":") {
			return bad("oci:DIR takes a directory only, without an image name: each image is named by its reference in the layout's index.json")
		}
		if strings.ContainsRune(dir, 0) {
			return bad("the directory name has a NUL byte")
		}
		return Target{Dir: filepath.Clean(dir)}, nil
	case strings.HasPrefix(s, "docker://"):
		rest := strings.TrimSuffix(strings.TrimPrefix(s, "docker://"), "/")
		host, prefix, _ := strings.Cut(rest, "/")
		if host == "" {
			return bad("no registry after docker:// (want docker://REGISTRY/PREFIX)")
		}
		if !strings.ContainsAny(host, ".:") {
			return bad("%q is not a registry host (want a host name with a dot or a port, as in docker://mirror.example.com:5000/microshift or docker://localhost:5000)", host)
		}
		if _, err := name.NewRegistry(host, name.StrictValidation); err != nil {
			return bad("registry %q: %v", host, err)
		}
		if prefix != "" {
			if strings.ContainsAny(prefix, "@:") {
				return bad("the prefix %q has a tag or digest; images keep their own digests (want docker://REGISTRY/PREFIX)", prefix)
			}
			if _, err := name.NewRepository(host+"/"+prefix, name.StrictValidation); err != nil {
				return bad("prefix %q: %v", prefix, err)
			}
		}
		return Target{Registry: host, Prefix: prefix}, nil
	}
	return bad("want oci:DIR (an OCI image layout) or docker://REGISTRY/PREFIX (a registry)")
}

// String is the destination as the user writes it.
func (t Target) String() string {
	if t.Dir != "" {
		return "oci:" + t.Dir
	}
	if t.Prefix == "" {
		return "docker://" + t.Registry
	}
	return "docker://" + t.Registry + "/" + t.Prefix
}

// Repository is where an image of source repository src goes in a registry
// target: REGISTRY/PREFIX/<src path without its registry>, so that
// quay.io/openshift-release-dev/ocp-v4.0-art-dev goes to
// REGISTRY/PREFIX/openshift-release-dev/ocp-v4.0-art-dev, the mapping a
// registries.conf mirror of quay.io at REGISTRY/PREFIX uses.
func (t Target) Repository(reg registryclient.Options, src name.Repository) (name.Repository, error) {
	path := src.RepositoryStr()
	if t.Prefix != "" {
		path = t.Prefix + "/" + path
	}
	return reg.ParseRepository(t.Registry + "/" + path)
}
