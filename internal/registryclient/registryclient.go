// Package registryclient is how microshift-compose talks to container
// registries, shared by mirror, footprint and the release tooling. It
// follows the containers rules podman, skopeo and buildah follow, through
// containers/image's own packages: credentials from the auth files in their
// lookup order (pkg/docker/config), registries.conf(.d) mirrors, blocked
// and insecure registries (pkg/sysregistriesv2), certs.d CA and client
// certificates (pkg/tlsclientconfig). TLS is verified except for insecure
// registries; plain HTTP is refused but for those and loopback (not for
// the private addresses go-containerregistry would also try it on). Every
// request has a whole-life timeout (headers and body; blob bodies a rate
// floor instead, uploads a write timeout) and is retried with backoff
// within a budget a Retry-After cannot exceed; metadata responses are
// capped. It holds no cobra and no state beyond a prepared transport.
package registryclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/microshift-compose/microshift-compose/internal/imageref"
)

// Options configure registry access.
type Options struct {
	// Jobs bounds concurrent requests per operation; 0 means DefaultJobs.
	Jobs int
	// Insecure lists registries (host[:port]) reached without TLS
	// verification, over plain HTTP when they do not speak TLS.
	Insecure []string
	// SkipTLSVerify turns TLS verification off for every registry
	// (--tls-verify=false).
	SkipTLSVerify bool
	// Retries is how many times a request is tried in all; 0 means
	// DefaultRetries.
	Retries int
	// Timeout bounds each request's whole answer, headers and body; a
	// blob body instead must keep MinBlobRate over each Timeout of
	// reading, and upload data each write. Retries x Timeout is each
	// request's retry budget (see Retry-After). 0 means DefaultTimeout.
	Timeout time.Duration
	// AuthFile is the one auth file to read (--authfile, or
	// $REGISTRY_AUTH_FILE: see ResolveAuthFile); "" is the containers
	// lookup order (see Keychain).
	AuthFile string
	// RegistriesConf replaces /etc/containers/registries.conf (and the
	// user's); "" is the containers default ($CONTAINERS_REGISTRIES_CONF
	// honoured).
	RegistriesConf string
	// CertDir, when set, holds the CA and client certificates for every
	// registry instead of the certs.d directories (see CertDirs).
	CertDir string
	// Keychain resolves credentials; nil means Keychain(SystemContext()).
	Keychain authn.Keychain
	// Transport replaces the per-host HTTP transports (tests inject
	// faults with it); timeouts on bodies, limits and retries still apply.
	Transport http.RoundTripper
	// UserAgent is sent with every request.
	UserAgent string

	state *state
}

// Defaults.
const (
	DefaultJobs    = 8
	DefaultRetries = 5
	DefaultTimeout = 30 * time.Second
)

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

// Prepare checks the configuration (registries.conf parses) and builds the
// transport once, so that every copy of the returned Options shares its
// connections. Unprepared Options build a transport per call.
func (o Options) Prepare() (Options, error) {
	if err := o.checkRegistriesConf(); err != nil {
		return o, err
	}
	o.state = o.newState()
	if o.CertDir != "" {
		// Read now, so that a bad --cert-dir is one error before any request.
		if _, err := o.state.tls.config(""); err != nil {
			return o, err
		}
	}
	return o, nil
}

func (o Options) newState() *state {
	st := &state{insecureMirrors: map[string]bool{}}
	o.state = st
	st.tls = &tlsConfigs{certDir: o.CertDir, certDirs: CertDirs(), insecure: o.insecureHost}
	st.transport = newTransport(o, st.tls)
	return st
}

// RoundTripper is the HTTP stack every request goes through (timeouts,
// limits, retries), without authentication.
func (o Options) RoundTripper() http.RoundTripper {
	if o.state != nil {
		return o.state.transport
	}
	return o.newState().transport
}

// ParseReference parses a fully qualified image reference, marking its
// registry insecure when it is.
func (o Options) ParseReference(s string) (name.Reference, error) {
	ref, err := imageref.ParseReference(s, name.StrictValidation)
	if err != nil {
		return nil, err
	}
	// No request leaves with a path that climbs out of the repository.
	if err := imageref.Check(s); err != nil {
		return nil, fmt.Errorf("%q: %w", s, err)
	}
	if o.insecureHost(ref.Context().RegistryStr()) {
		return imageref.ParseReference(s, name.StrictValidation, name.Insecure)
	}
	return ref, nil
}

// ParseRepository parses a repository ("registry/path"), marking its
// registry insecure when it is.
func (o Options) ParseRepository(s string) (name.Repository, error) {
	repo, err := imageref.NewRepository(s, name.StrictValidation)
	if err != nil {
		return name.Repository{}, err
	}
	if err := imageref.Check(s); err != nil {
		return name.Repository{}, fmt.Errorf("%q: %w", s, err)
	}
	if o.insecureHost(repo.RegistryStr()) {
		return imageref.NewRepository(s, name.StrictValidation, name.Insecure)
	}
	return repo, nil
}

func (o Options) keychain() authn.Keychain {
	if o.Keychain == nil {
		return Keychain(o.SystemContext())
	}
	return o.Keychain
}

// never is go-containerregistry's retry predicate: the transport below it
// already retried what is worth retrying, and Retry handles the rest.
//
// Why the retries are not go-containerregistry's own retry transport
// (transport.NewRetry, which remote.WithRetryPredicate/WithRetryStatusCodes
// configure): it sends the same *http.Request again without rewinding its
// body (a replayed PUT of a manifest would send nothing), it cannot tell
// blob upload data (which only a new upload session can retry) from other
// requests, and it ignores Retry-After. What it does express, the backoff
// schedule, is its type: backoff below is a remote.Backoff, and Remote
// hands it to go-containerregistry too.
func never(error) bool { return false }

// backoff is the schedule between attempts: 200ms doubling, capped at 5s,
// no jitter (retries are few and the waits are part of what the tests
// check).
func backoff() remote.Backoff {
	return remote.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 16, Cap: 5 * time.Second}
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
		remote.WithTransport(o.RoundTripper()),
		remote.WithRetryPredicate(never),
		remote.WithRetryStatusCodes(),
		remote.WithRetryBackoff(backoff()),
	}
	if o.UserAgent != "" {
		opts = append(opts, remote.WithUserAgent(o.UserAgent))
	}
	return opts
}

// PullTransport returns an HTTP transport authenticated for pulling from
// repo, with the timeouts, limits and retries of Remote: for requests
// go-containerregistry has no call for, such as streaming a blob the caller
// verifies itself.
func (o Options) PullTransport(ctx context.Context, repo name.Repository) (http.RoundTripper, error) {
	auth, err := authn.Resolve(ctx, o.keychain(), repo)
	if err != nil {
		return nil, fmt.Errorf("resolving credentials for %s: %w", repo, err)
	}
	rt := o.RoundTripper()
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

// Backoff is the wait before attempt n+1 (n >= 1) on the backoff schedule.
func Backoff(n int) time.Duration {
	b := backoff()
	d := b.Step()
	for i := 1; i < n; i++ {
		d = b.Step()
	}
	return d
}

// Retry runs fn until it succeeds, fails in a way another attempt would not
// mend, or Attempts() attempts are used, waiting Backoff between attempts.
// The transport already retries failed requests and 408, 429 and 5xx
// answers; Retry is for what it cannot see: a body that stalls or a
// connection dropped while a response is read, and the answer to a blob
// upload's data, which only a new upload can retry.
func (o Options) Retry(ctx context.Context, fn func() error) error {
	var err error
	for n := 1; ; n++ {
		if err = fn(); err == nil || !o.retryable(err) {
			return err
		}
		if n >= o.Attempts() {
			if n > 1 {
				err = fmt.Errorf("%w (gave up after %d attempts)", err, n)
			}
			return err
		}
		if !sleep(ctx, Backoff(n)) {
			return err
		}
	}
}

func (o Options) retryable(err error) bool {
	var terr *transport.Error
	if errors.As(err, &terr) {
		// The transport retried this answer unless it was to upload data.
		return terr.Request != nil && isUploadData(terr.Request) && Temporary(err)
	}
	var rerr *RequestError
	if errors.As(err, &rerr) {
		return !rerr.replayable && Temporary(rerr.Cause())
	}
	return Temporary(err)
}

// Temporary reports whether err is a failure that another attempt may not
// meet: a 5xx, 408 or 429 response, a timeout, a stalled body, or a
// connection refused, reset or dropped mid-response. A cancelled context,
// 4xx answers, requests the transport gave up on and content that does not
// match its digest are final.
func Temporary(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || isContextDeadline(err) || errors.Is(err, ErrTooLarge) {
		return false
	}
	var rerr *RequestError
	if errors.As(err, &rerr) {
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
	if errors.Is(err, ErrStalled) || errors.Is(err, ErrTimeout) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
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

// isContextDeadline reports whether err is (or wraps) the
// context.DeadlineExceeded value itself. errors.Is is not enough: net and
// net/http timeouts say they are context.DeadlineExceeded too, and those
// are worth another attempt.
func isContextDeadline(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e == context.DeadlineExceeded {
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
	if r, perr := imageref.ParseReference(ref); perr == nil {
		registry = r.Context().RegistryStr()
	} else if r, perr := imageref.NewRepository(ref); perr == nil {
		registry = r.RegistryStr()
	}
	var terr *transport.Error
	if errors.As(err, &terr) {
		if terr.Request != nil && terr.Request.URL != nil && terr.Request.URL.Host != "" {
			registry = terr.Request.URL.Host
		}
		switch terr.StatusCode {
		case http.StatusUnauthorized:
			return fmt.Errorf("%s: %w (401 Unauthorized): log in with 'podman login %s' or pass --authfile (auth files are read where podman reads them: %s)", ref, ErrUnauthorized, registry, AuthLookup)
		case http.StatusForbidden:
			return fmt.Errorf("%s: %w (403 Forbidden): the credentials for %s may not read this repository", ref, ErrDenied, registry)
		case http.StatusNotFound:
			return fmt.Errorf("%s: %w in the registry (404 Not Found): check the reference in the release file", ref, ErrNotFound)
		}
	}
	return fmt.Errorf("%s: %w", ref, err)
}

// CheckHost checks a registry host[:port] as go-containerregistry parses
// it, and its port (1-65535), which neither go-containerregistry nor the
// containers reference grammar bounds.
func CheckHost(host string) error {
	if _, err := name.NewRegistry(host, name.StrictValidation); err != nil {
		return fmt.Errorf("registry %q: %v", host, err)
	}
	if _, port, err := net.SplitHostPort(host); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("registry %q: port %s is not a TCP port (1-65535)", host, port)
		}
	}
	return nil
}
