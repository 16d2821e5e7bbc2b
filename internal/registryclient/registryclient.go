// Package registryclient is how microshift-compose talks to container
// registries, shared by mirror, footprint and the release tooling: auth from
// the standard Docker/Podman auth files, TLS verification on (plain HTTP
// only for registries the user names, and for loopback, as
// go-containerregistry decides), retries with backoff on 5xx, 429 and
// timeouts, and bounded concurrency. It holds no cobra and no state.
package registryclient

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Options configure registry access.
type Options struct {
	// Jobs bounds concurrent requests per operation; 0 means DefaultJobs.
	Jobs int
	// Insecure lists registries (host[:port]) to reach over plain HTTP.
	// Every other registry uses HTTPS with certificate verification.
	Insecure []string
	// Retries is how many times a request failing with 5xx, 429 or a
	// timeout is tried in all; 0 means DefaultRetries.
	Retries int
	// Keychain resolves credentials; nil means authn.DefaultKeychain
	// (~/.docker/config.json, $DOCKER_CONFIG, and the Podman auth file).
	Keychain authn.Keychain
	// Transport replaces the HTTP transport (tests inject faults with it).
	Transport http.RoundTripper
	// UserAgent is sent with every request.
	UserAgent string
}

// Defaults.
const (
	DefaultJobs    = 8
	DefaultRetries = 5
)

// ParseReference parses a fully qualified image reference, applying
// Insecure to its registry.
func (o Options) ParseReference(s string) (name.Reference, error) {
	ref, err := name.ParseReference(s, name.StrictValidation)
	if err != nil {
		return nil, err
	}
	if slices.Contains(o.Insecure, ref.Context().RegistryStr()) {
		return name.ParseReference(s, name.StrictValidation, name.Insecure)
	}
	return ref, nil
}

// ParseRepository parses a repository ("registry/path"), applying Insecure.
func (o Options) ParseRepository(s string) (name.Repository, error) {
	repo, err := name.NewRepository(s, name.StrictValidation)
	if err != nil {
		return name.Repository{}, err
	}
	if slices.Contains(o.Insecure, repo.RegistryStr()) {
		return name.NewRepository(s, name.StrictValidation, name.Insecure)
	}
	return repo, nil
}

// Remote returns the go-containerregistry options for these settings.
func (o Options) Remote(ctx context.Context) []remote.Option {
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = DefaultJobs
	}
	retries := o.Retries
	if retries <= 0 {
		retries = DefaultRetries
	}
	kc := o.Keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(kc),
		remote.WithJobs(jobs),
		remote.WithRetryBackoff(remote.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: retries}),
		remote.WithRetryStatusCodes(http.StatusRequestTimeout, http.StatusTooManyRequests,
			http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout),
	}
	if o.Transport != nil {
		opts = append(opts, remote.WithTransport(o.Transport))
	}
	if o.UserAgent != "" {
		opts = append(opts, remote.WithUserAgent(o.UserAgent))
	}
	return opts
}
