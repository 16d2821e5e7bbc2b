package airgap

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/containers/image/v5/docker/reference"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/safetext"
)

// ErrBadDestination and ErrBadSource are wrapped by ParseDestination's
// and ParseSource's errors.
var (
	ErrBadDestination = errors.New("invalid destination")
	ErrBadSource      = errors.New("invalid source")
)

// Transports, as the user writes them before the colon.
const (
	// TransportOCI is oci:DIR, an OCI image layout directory.
	TransportOCI = "oci"
	// TransportArchive is oci-archive:FILE, an OCI image layout in one tar
	// file (what skopeo's oci-archive: transport reads).
	TransportArchive = "oci-archive"
	// TransportDir is dir:DIR, an OCI image layout directory that also
	// holds one skopeo dir: directory per image (blobs hard-linked), the
	// form every skopeo version reads: what the bootc Containerfile embeds.
	TransportDir = "dir"
	// TransportDocker is docker://REGISTRY/PREFIX, a registry.
	TransportDocker = "docker"
)

// Target is a parsed --to or --from: a place images are copied to or from.
type Target struct {
	// Transport is one of the Transport constants.
	Transport string
	// Path is the directory or file of oci:, dir: and oci-archive:.
	Path string
	// Registry is the host[:port] of docker://REGISTRY/PREFIX.
	Registry string
	// Prefix is the repository path every image goes under ("" for none).
	Prefix string
}

// IsLayout reports whether the target is written as an OCI image layout
// (oci:, dir: and, staged, oci-archive:).
func (t Target) IsLayout() bool { return t.Transport != TransportDocker }

// ParseDestination parses a --to: oci:DIR, dir:DIR, oci-archive:FILE or
// docker://REGISTRY[/PREFIX].
func ParseDestination(s string) (Target, error) { return parseTarget(s, ErrBadDestination) }

func parseTarget(s string, sentinel error) (Target, error) {
	bad := func(format string, args ...any) (Target, error) {
		return Target{}, fmt.Errorf("%w %q: %s", sentinel, s, fmt.Sprintf(format, args...))
	}
	if strings.ContainsRune(s, 0) {
		return bad("it has a NUL byte")
	}
	for _, tr := range []struct{ prefix, transport, what string }{
		{"oci:", TransportOCI, "DIR"},
		{"dir:", TransportDir, "DIR"},
		{"oci-archive:", TransportArchive, "FILE"},
	} {
		rest, ok := strings.CutPrefix(s, tr.prefix)
		if !ok {
			continue
		}
		if rest == "" {
			return bad("no %s after %s (want %s%s)", strings.ToLower(tr.what), tr.prefix, tr.prefix, tr.what)
		}
		if strings.Contains(rest, ":") {
			return bad("%s%s takes a path only, without an image name: each image is named by its reference in the layout's index.json", tr.prefix, tr.what)
		}
		p := filepath.Clean(rest)
		if tr.transport == TransportArchive && (strings.HasSuffix(rest, "/") || p == "." || p == "..") {
			return bad("oci-archive:FILE names a file, not a directory")
		}
		return Target{Transport: tr.transport, Path: p}, nil
	}
	if rest, ok := strings.CutPrefix(s, "docker://"); ok {
		if safetext.RegistryCredentials(rest) {
			return Target{}, fmt.Errorf("%w: docker://REGISTRY holds credentials (user:password@ before the registry): give them in the auth file (--authfile, podman login), not in the reference", sentinel)
		}
		host, prefix, err := ParseRegistryPrefix(strings.TrimSuffix(rest, "/"))
		if err != nil {
			return bad("%v", err)
		}
		return Target{Transport: TransportDocker, Registry: host, Prefix: prefix}, nil
	}
	return bad("want oci:DIR (an OCI image layout), dir:DIR (a layout plus one dir: per image, for bootc), oci-archive:FILE (a layout in one tar file) or docker://REGISTRY/PREFIX (a registry)")
}

// ParseSource parses a --from: oci:DIR or oci-archive:FILE (a dir:DIR
// destination is read as oci:DIR).
func ParseSource(s string) (Target, error) {
	if strings.HasPrefix(s, "docker://") {
		return Target{}, fmt.Errorf("%w %q: registries are read from the plan's references (--lock or --profile) without --from; --from takes oci:DIR or oci-archive:FILE", ErrBadSource, s)
	}
	t, err := parseTarget(s, ErrBadSource)
	if err != nil {
		return Target{}, err
	}
	if t.Transport == TransportDir {
		t.Transport = TransportOCI
	}
	return t, nil
}

// ParseRegistryPrefix parses REGISTRY[/PREFIX] (a mirror registry as
// --to docker:// and --mirror-registry name it) into its host[:port] and
// repository prefix.
func ParseRegistryPrefix(s string) (host, prefix string, err error) {
	host, prefix, _ = strings.Cut(s, "/")
	if host == "" {
		return "", "", errors.New("no registry (want REGISTRY/PREFIX, as in mirror.example.com:5000/microshift)")
	}
	if !strings.ContainsAny(host, ".:") {
		return "", "", fmt.Errorf("%q is not a registry host (want a host name with a dot or a port, as in mirror.example.com:5000/microshift or localhost:5000)", host)
	}
	if err := registryclient.CheckHost(host); err != nil {
		return "", "", err
	}
	// The grammar containers/image applies to a registries.conf mirror
	// location, which a device will read this as.
	if named, err := reference.ParseNormalizedNamed(host + "/x/y"); err != nil || reference.Domain(named) != host {
		return "", "", fmt.Errorf("%q is not a registry host name (as in mirror.example.com:5000)", host)
	}
	if prefix != "" {
		if strings.ContainsAny(prefix, "@:") {
			return "", "", fmt.Errorf("the prefix %q has a tag or digest; images keep their own digests (want REGISTRY/PREFIX)", prefix)
		}
		if _, err := imageref.NewRepository(host+"/"+prefix, name.StrictValidation); err != nil {
			return "", "", fmt.Errorf("prefix %q: %v", prefix, err)
		}
		if _, err := reference.ParseNormalizedNamed(host + "/" + prefix + "/x/y"); err != nil {
			return "", "", fmt.Errorf("prefix %q: %v", prefix, err)
		}
	}
	return host, prefix, nil
}

// String is the target as the user writes it.
func (t Target) String() string {
	switch t.Transport {
	case TransportDocker:
		if t.Prefix == "" {
			return "docker://" + t.Registry
		}
		return "docker://" + t.Registry + "/" + t.Prefix
	case "":
		return ""
	}
	return t.Transport + ":" + t.Path
}

// MirrorLocation is REGISTRY[/PREFIX] of a registry target: the location
// of a registries.conf mirror.
func (t Target) MirrorLocation() string {
	if t.Prefix == "" {
		return t.Registry
	}
	return t.Registry + "/" + t.Prefix
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

// OCI is the oci:DIR target.
func OCI(dir string) Target { return Target{Transport: TransportOCI, Path: dir} }
