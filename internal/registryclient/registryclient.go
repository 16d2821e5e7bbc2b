// Package registryclient is how microshift-compose talks to container
// registries, shared by mirror, footprint and the release tooling: auth from
// the standard Docker/Podman auth files, TLS verification on (plain HTTP
// only for registries the user names, and for loopback, as
// go-containerregistry decides), retries with backoff on 5xx, 429 and
// timeouts, and bounded concurrency. It holds no cobra and no state.
package registryclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
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

// retryBackoff and retryStatus are the retry policy Remote and Transport
// share.
func (o Options) retryBackoff() remote.Backoff {
	return remote.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: o.Attempts()}
}

var retryStatus = []int{http.StatusRequestTimeout, http.StatusTooManyRequests,
	http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}

func (o Options) keychain() authn.Keychain {
	if o.Keychain == nil {
		return authn.DefaultKeychain
	}
	return o.Keychain
}

// Remote returns the go-containerregistry options for these settings.
func (o Options) Remote(ctx context.Context) []remote.Option {
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = DefaultJobs
	}
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(o.keychain()),
		remote.WithJobs(jobs),
		remote.WithRetryBackoff(o.retryBackoff()),
		remote.WithRetryStatusCodes(retryStatus...),
	}
	if o.Transport != nil {
		opts = append(opts, remote.WithTransport(o.Transport))
	}
	if o.UserAgent != "" {
		opts = append(opts, remote.WithUserAgent(o.UserAgent))
	}
	return opts
}

// PullTransport returns an HTTP transport authenticated for pulling from repo,
// with the retry policy of Remote: for requests go-containerregistry has
// no call for, such as streaming a blob the caller verifies itself.
func (o Options) PullTransport(ctx context.Context, repo name.Repository) (http.RoundTripper, error) {
	auth, err := authn.Resolve(ctx, o.keychain(), repo)
	if err != nil {
		return nil, fmt.Errorf("resolving credentials for %s: %w", repo, err)
	}
	base := o.Transport
	if base == nil {
		base = remote.DefaultTransport
	}
	rt := transport.NewRetry(base, transport.WithRetryBackoff(o.retryBackoff()), transport.WithRetryStatusCodes(retryStatus...))
	if o.UserAgent != "" {
		rt = transport.NewUserAgent(rt, o.UserAgent)
	}
	return transport.NewWithContext(ctx, repo.Registry, auth, rt, []string{repo.Scope(transport.PullScope)})
}

// Attempts is how many times an operation is tried in all (Retries, or
// DefaultRetries when unset).
func (o Options) Attempts() int {
	if o.Retries <= 0 {
		return DefaultRetries
	}
	return o.Retries
}

// Backoff is the wait before attempt n+1 (n >= 1): 200ms doubling, capped at
// 5s, the same schedule Remote gives go-containerregistry.
func Backoff(n int) time.Duration {
	d := 200 * time.Millisecond
	for i := 1; i < n && d < 5*time.Second; i++ {
		d *= 2
	}
	return min(d, 5*time.Second)
}

// Retry runs fn until it succeeds, fails in a way another attempt would not
// mend, or Attempts() attempts are used, waiting Backoff between attempts.
// The transport Remote configures already retries 5xx, 429 and 408 answers
// and failed requests; Retry is for what it cannot see, a connection
// dropped or reset while a response body is read, so it retries Temporary
// errors that are not HTTP answers.
func (o Options) Retry(ctx context.Context, fn func() error) error {
	var err error
	for n := 1; ; n++ {
		var terr *transport.Error
		if err = fn(); err == nil || !Temporary(err) || errors.As(err, &terr) || n >= o.Attempts() {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(Backoff(n)):
		}
	}
}

// Temporary reports whether err is a failure that another attempt may not
// meet: a 5xx, 408 or 429 response, a timeout, or a connection reset or
// dropped mid-response. A cancelled context, 4xx answers and content that
// does not match its digest are final.
func Temporary(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var terr *transport.Error
	if errors.As(err, &terr) {
		switch terr.StatusCode {
		case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		return true
	}
	// net/http reports a connection closed before or during a response
	// with unexported error types; their text is all there is.
	msg := err.Error()
	for _, s := range []string{"connection reset", "broken pipe", "server closed idle connection", "unexpected EOF", "EOF"} {
		if strings.HasSuffix(msg, s) || strings.Contains(msg, s+" ") || strings.Contains(msg, s+":") {
			return true
		}
	}
	return false
}

// Sentinels Describe wraps, for callers that branch on them.
var (
	ErrUnauthorized = errors.New("authentication required")
	ErrDenied       = errors.New("access denied")
	ErrNotFound     = errors.New("not found")
)

// Describe turns a registry error about ref into one line that names the
// image and says what to do: 401, 403 and 404 answers wrap ErrUnauthorized,
// ErrDenied and ErrNotFound; other errors are wrapped as they are.
func Describe(ref string, err error) error {
	if err == nil {
		return nil
	}
	registry := ref
	if r, perr := name.ParseReference(ref); perr == nil {
		registry = r.Context().RegistryStr()
	} else if r, perr := name.NewRepository(ref); perr == nil {
		registry = r.RegistryStr()
	}
	var terr *transport.Error
	if errors.As(err, &terr) {
		if terr.Request != nil && terr.Request.URL != nil && terr.Request.URL.Host != "" {
			registry = terr.Request.URL.Host
		}
		switch terr.StatusCode {
		case http.StatusUnauthorized:
			return fmt.Errorf("%s: %w (401 Unauthorized): log in with 'podman login %s' (credentials are read from the Docker and Podman auth files)", ref, ErrUnauthorized, registry)
		case http.StatusForbidden:
			return fmt.Errorf("%s: %w (403 Forbidden): the credentials for %s may not read this repository", ref, ErrDenied, registry)
		case http.StatusNotFound:
			return fmt.Errorf("%s: %w in the registry (404 Not Found): check the reference in the release file", ref, ErrNotFound)
		}
	}
	return fmt.Errorf("%s: %w", ref, err)
}
