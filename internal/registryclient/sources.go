package registryclient

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/containers/image/v5/docker/reference"
	"github.com/containers/image/v5/pkg/cli/environment"
	"github.com/containers/image/v5/pkg/sysregistriesv2"
	"github.com/containers/image/v5/types"
	"github.com/containers/storage/pkg/homedir"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
)

// ErrBlocked is wrapped when registries.conf blocks the registry of an image.
var ErrBlocked = errors.New("blocked in registries.conf")

// CertDirs are the certs.d directories searched for a <host[:port]>
// subdirectory of CA and client certificates, in containers/image's order
// (the first that has one wins): the user's, then /etc/containers/certs.d,
// then Docker's /etc/docker/certs.d.
func CertDirs() []string {
	return []string{
		filepath.Join(homedir.Get(), ".config", "containers", "certs.d"),
		"/etc/containers/certs.d",
		"/etc/docker/certs.d",
	}
}

func findCertDir(dirs []string, host string) string {
	for _, d := range dirs {
		p := filepath.Join(d, host)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
	}
	return ""
}

// SystemContext is the containers/image configuration these options stand
// for: the auth file, registries.conf and certificate directory. Without
// RegistriesConf, $CONTAINERS_REGISTRIES_CONF (or the older
// $REGISTRIES_CONFIG_PATH) names registries.conf, by containers/image's
// own environment handling (pkg/cli/environment), as for podman and skopeo.
func (o Options) SystemContext() *types.SystemContext {
	sys := &types.SystemContext{
		AuthFilePath:             o.AuthFile,
		SystemRegistriesConfPath: o.RegistriesConf,
		DockerCertPath:           o.CertDir,
	}
	_ = environment.UpdateRegistriesConf(sys) // fails only for a nil sys
	return sys
}

// registriesConfSource names where the registries.conf in use comes from,
// for messages: the flag, the environment, or "" for the default.
func (o Options) registriesConfSource() (from, path string) {
	path = o.SystemContext().SystemRegistriesConfPath
	switch {
	case path == "":
		return "", ""
	case o.RegistriesConf != "":
		return "--registries-conf", path
	case os.Getenv("CONTAINERS_REGISTRIES_CONF") == path:
		return "$CONTAINERS_REGISTRIES_CONF", path
	}
	return "$REGISTRIES_CONFIG_PATH", path
}

// state is what Options compute once and share between the copies of a
// prepared Options: the transport, and the hosts found insecure.
type state struct {
	transport *stack
	tls       *tlsConfigs
	// insecureMirrors are mirror hosts registries.conf marks insecure,
	// recorded as PullSources meets them.
	mu              sync.Mutex
	insecureMirrors map[string]bool
}

// insecureHost reports whether TLS verification is off (and plain HTTP
// allowed) for host: --tls-verify=false, --insecure-registry, or
// registries.conf's insecure = true for its registry or a mirror on it.
func (o Options) insecureHost(host string) bool {
	if o.SkipTLSVerify || slices.Contains(o.Insecure, host) {
		return true
	}
	if o.state != nil {
		o.state.mu.Lock()
		ok := o.state.insecureMirrors[host]
		o.state.mu.Unlock()
		if ok {
			return true
		}
	}
	reg, err := sysregistriesv2.FindRegistry(o.SystemContext(), host)
	return err == nil && reg != nil && reg.Insecure && hostOf(reg.Location) == host
}

func (o Options) markInsecure(host string) {
	if o.state == nil {
		return
	}
	o.state.mu.Lock()
	o.state.insecureMirrors[host] = true
	o.state.mu.Unlock()
}

func hostOf(location string) string {
	h, _, _ := strings.Cut(location, "/")
	return h
}

// Source is one place to pull an image from: a registries.conf mirror, or
// the image's own registry.
type Source struct {
	// Ref is the image's reference at this source.
	Ref name.Reference
	// Mirror is set for a registries.conf mirror.
	Mirror bool
}

// PullSources lists where to pull the image ref from, in the order podman
// and skopeo try them: the registries.conf mirrors of its registry (those
// that apply to a digest or a tag reference), then the registry itself.
// A registry that registries.conf blocks is an error wrapping ErrBlocked.
func (o Options) PullSources(ref string) ([]Source, error) {
	primary, err := o.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("parsing image reference %q: %w", ref, err)
	}
	reg, err := sysregistriesv2.FindRegistry(o.SystemContext(), ref)
	if err != nil {
		return nil, fmt.Errorf("reading registries configuration: %w", err)
	}
	if reg == nil {
		return []Source{{Ref: primary}}, nil
	}
	if reg.Blocked {
		return nil, fmt.Errorf("%s: registry %s is %w", ref, reg.Prefix, ErrBlocked)
	}
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return nil, fmt.Errorf("parsing image reference %q: %w", ref, err)
	}
	pulls, err := reg.PullSourcesFromReference(named)
	if err != nil {
		return nil, fmt.Errorf("%s: applying registries.conf: %w", ref, err)
	}
	var out []Source
	for i, p := range pulls {
		mirror := i < len(pulls)-1
		if p.Endpoint.Insecure {
			o.markInsecure(reference.Domain(p.Reference))
		}
		r, err := o.ParseReference(p.Reference.String())
		if err != nil {
			return nil, fmt.Errorf("%s: registries.conf maps it to %q: %w", ref, p.Reference.String(), err)
		}
		out = append(out, Source{Ref: r, Mirror: mirror})
	}
	return out, nil
}

// checkRegistriesConf loads registries.conf (and its .d directory) once,
// so that a broken file is one clear error before any request.
func (o Options) checkRegistriesConf() error {
	// Through the input gate before containers/image reads it: regular,
	// and bounded.
	if from, path := o.registriesConfSource(); from != "" {
		data, err := inputfile.Read(from, path, MaxConfigFile)
		if err != nil {
			return err
		}
		// Bounded in structure too: containers/image decodes it with a
		// TOML decoder whose memory grows with nesting.
		if err := inputfile.CheckTOML(data); err != nil {
			return fmt.Errorf("%s %s: %w", from, path, err)
		}
	}
	if _, err := sysregistriesv2.GetRegistries(o.SystemContext()); err != nil {
		return fmt.Errorf("reading registries configuration: %w", err)
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
