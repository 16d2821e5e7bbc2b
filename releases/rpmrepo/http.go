package rpmrepo

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
)

// Defaults of a Client.
const (
	DefaultTimeout  = 30 * time.Second
	DefaultAttempts = 3
	// MinRate is the slowest a download may go: at least this many bytes
	// per second on average over each Timeout of reading (as registry blob
	// downloads, and curl's --speed-limit/--speed-time, which dnf's
	// minrate and timeout options are), or it is ErrStalled.
	MinRate = 16 << 10
	// maxCredentialFile bounds sslcacert, sslclientcert, sslclientkey.
	maxCredentialFile = 1 << 20
)

// ErrStalled is wrapped when a repository stops sending data.
var ErrStalled = errors.New("repository stopped sending data")

// ErrNotFound is wrapped when a repository answers 404 for a file.
var ErrNotFound = errors.New("not found")

// Client fetches files from dnf repositories.
type Client struct {
	// Timeout bounds connecting, the TLS handshake and waiting for an
	// answer's headers; a body must then keep MinRate over each Timeout.
	// 0 means DefaultTimeout.
	Timeout time.Duration
	// Attempts is how many times a request failing to connect or answered
	// with a 5xx is tried in all; 0 means DefaultAttempts.
	Attempts int
	// UserAgent is sent with every request.
	UserAgent string
	// Transport, when set, replaces the HTTP transport of every repository
	// (tests); timeouts on bodies still apply.
	Transport http.RoundTripper

	mu      sync.Mutex
	clients map[*Repo]*http.Client
}

// origin is where a URL's request goes, as credentials are scoped: its
// scheme, host and port (the scheme's default when the URL names none),
// in lower case.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// origins maps the origins of the repository's baseurls, the only places
// its credentials go, to the basic-auth credentials sent there: username
// and password when set, else the baseurl's own user information, else
// none (nil). The client certificate goes to each of them.
func (r *Repo) origins() map[string]*url.Userinfo {
	out := map[string]*url.Userinfo{}
	for _, b := range r.BaseURLs {
		o := origin(b)
		switch {
		case r.Username != "":
			out[o] = url.UserPassword(r.Username, r.Password)
		case b.User != nil && out[o] == nil:
			out[o] = b.User
		default:
			if _, ok := out[o]; !ok {
				out[o] = nil
			}
		}
	}
	return out
}

// ownOrigins names the repository's origins for messages, sorted.
func (r *Repo) ownOrigins() string {
	var names []string
	for o := range r.origins() {
		names = append(names, o)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// hasCredentials reports whether the repository has anything to withhold
// from other origins: basic-auth credentials or a client certificate.
func (r *Repo) hasCredentials() bool {
	if r.ClientCert != "" {
		return true
	}
	for _, c := range r.origins() {
		if c != nil {
			return true
		}
	}
	return false
}

// isOwn reports whether u is at one of the repository's own origins.
func (r *Repo) isOwn(u *url.URL) bool {
	_, ok := r.origins()[origin(u)]
	return ok
}

// originGate is the transport of a repository's requests: each request,
// the first and every redirect, goes with the repository's credentials
// (basic auth, and the client certificate of own's TLS configuration) when
// it is for one of the repository's origins, and through other, without
// them, when it is not: an href or xml:base of the metadata, or a
// redirect, naming another scheme, host or port. net/http alone would
// send the client certificate to any server that asks and keep an
// Authorization header across redirects to the same host name on another
// port or to a subdomain.
type originGate struct {
	own, other http.RoundTripper
	creds      map[string]*url.Userinfo
}

func (g *originGate) RoundTrip(req *http.Request) (*http.Response, error) {
	creds, own := g.creds[origin(req.URL)]
	r := req.Clone(req.Context())
	r.Header.Del("Authorization")
	r.URL.User = nil
	if !own {
		return g.other.RoundTrip(r)
	}
	if creds != nil {
		password, _ := creds.Password()
		r.SetBasicAuth(creds.Username(), password)
	}
	return g.own.RoundTrip(r)
}

func (c *Client) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

func (c *Client) attempts() int {
	if c.Attempts <= 0 {
		return DefaultAttempts
	}
	return c.Attempts
}

// httpClient returns the HTTP client for r: its CA, client certificate and
// TLS verification, its proxy, the timeouts, and its credentials sent only
// to its own origins (originGate).
func (c *Client) httpClient(r *Repo) (*http.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hc := c.clients[r]; hc != nil {
		return hc, nil
	}
	own, other := c.Transport, c.Transport
	if own == nil {
		conf, err := r.tlsConfig()
		if err != nil {
			return nil, err
		}
		proxy := http.ProxyFromEnvironment
		switch {
		case r.NoProxy:
			proxy = nil
		case r.Proxy != nil:
			proxy = http.ProxyURL(r.Proxy)
		}
		t := &http.Transport{
			Proxy:                 proxy,
			DialContext:           (&net.Dialer{Timeout: c.timeout(), KeepAlive: 30 * time.Second}).DialContext,
			TLSClientConfig:       conf,
			TLSHandshakeTimeout:   c.timeout(),
			ResponseHeaderTimeout: c.timeout(),
			ExpectContinueTimeout: time.Second,
			ForceAttemptHTTP2:     true,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
		}
		// Other origins: the same trust (CA, sslverify) and proxy, no
		// client certificate.
		o := t.Clone()
		o.TLSClientConfig.Certificates = nil
		own, other = t, o
	}
	hc := &http.Client{
		Transport: &originGate{own: own, other: other, creds: r.origins()},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
				return fmt.Errorf("refusing a redirect from https to %s", redact(req.URL))
			}
			return nil
		},
	}
	if c.clients == nil {
		c.clients = map[*Repo]*http.Client{}
	}
	c.clients[r] = hc
	return hc, nil
}

// tlsConfig is the repository's sslcacert, sslclientcert/sslclientkey and
// sslverify, the way RHEL's CDN and Satellite are reached.
func (r *Repo) tlsConfig() (*tls.Config, error) {
	// sslverify=0 turns verification off, as in dnf.
	conf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: !r.SSLVerify}
	if r.CACert != "" {
		pem, err := inputfile.Read("sslcacert", r.CACert, maxCredentialFile)
		if err != nil {
			return nil, fmt.Errorf("repo %s: %w", r.ID, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("repo %s: sslcacert %s holds no PEM certificate", r.ID, r.CACert)
		}
		conf.RootCAs = pool
	}
	if r.ClientCert != "" || r.ClientKey != "" {
		if r.ClientCert == "" {
			return nil, fmt.Errorf("repo %s: sslclientkey without sslclientcert", r.ID)
		}
		certPEM, err := inputfile.Read("sslclientcert", r.ClientCert, maxCredentialFile)
		if err != nil {
			return nil, fmt.Errorf("repo %s: %w", r.ID, err)
		}
		keyPEM := certPEM // a key may sit in the certificate's file
		if r.ClientKey != "" {
			if keyPEM, err = inputfile.Read("sslclientkey", r.ClientKey, maxCredentialFile); err != nil {
				return nil, fmt.Errorf("repo %s: %w", r.ID, err)
			}
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			// The library's message names no file and quotes nothing secret.
			return nil, fmt.Errorf("repo %s: client certificate %s and key %s: %v", r.ID, r.ClientCert, orText(r.ClientKey, r.ClientCert), err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// open starts reading the file at u (http, https or file), retrying
// failures to connect and 5xx answers. The body must keep MinRate; the
// caller closes it.
func (c *Client) open(ctx context.Context, r *Repo, u *url.URL) (io.ReadCloser, error) {
	if u.Scheme == "file" {
		return openLocal(u)
	}
	hc, err := c.httpClient(r)
	if err != nil {
		return nil, err
	}
	var last error
	for n := 1; n <= c.attempts(); n++ {
		if n > 1 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(n-1) * time.Second):
			}
		}
		body, retry, err := c.get(ctx, hc, r, u)
		if err == nil {
			return body, nil
		}
		last = err
		if !retry {
			break
		}
	}
	return nil, last
}

func (c *Client) get(ctx context.Context, hc *http.Client, r *Repo, u *url.URL) (body io.ReadCloser, retry bool, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	// Credentials are the transport's to add (originGate), never the
	// URL's.
	bare := *u
	bare.User = nil
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, bare.String(), nil)
	if err != nil {
		cancel(nil)
		return nil, false, err
	}
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	resp, err := hc.Do(req)
	if err != nil {
		cancel(nil)
		if ctx.Err() != nil && context.Cause(ctx) == ctx.Err() && errors.Is(err, context.Canceled) {
			return nil, false, err
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is named by the caller
		}
		var nerr net.Error
		if errors.As(err, &nerr) && nerr.Timeout() {
			return nil, true, fmt.Errorf("no answer within %s: %v", c.timeout(), err)
		}
		return nil, true, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel(nil)
		switch {
		case resp.StatusCode == http.StatusNotFound:
			return nil, false, fmt.Errorf("%w (404)", ErrNotFound)
		case (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) && !r.isOwn(resp.Request.URL):
			return nil, false, fmt.Errorf("access denied (%d %s) by %s, which is not the repository's own origin: its credentials and client certificate go only to %s, so a mirror its metadata or a redirect names must serve the file without them", resp.StatusCode, http.StatusText(resp.StatusCode), origin(resp.Request.URL), r.ownOrigins())
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			return nil, false, fmt.Errorf("access denied (%d %s): check the repository's client certificate (sslclientcert, sslclientkey) or credentials", resp.StatusCode, http.StatusText(resp.StatusCode))
		case resp.StatusCode >= 500:
			return nil, true, fmt.Errorf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
		}
		return nil, false, fmt.Errorf("unexpected answer %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return newRateReader(resp.Body, cancel, c.timeout()), false, nil
}

// rateReader cancels the request when its body delivers less than MinRate
// on average over a window; a read then fails with ErrStalled.
type rateReader struct {
	body   io.ReadCloser
	cancel context.CancelCauseFunc
	window time.Duration
	timer  *time.Timer

	mu      sync.Mutex
	read    int64
	stalled bool
}

func newRateReader(body io.ReadCloser, cancel context.CancelCauseFunc, window time.Duration) *rateReader {
	r := &rateReader{body: body, cancel: cancel, window: window}
	r.timer = time.AfterFunc(window, r.check)
	return r
}

func (r *rateReader) check() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.read < int64(MinRate*r.window.Seconds()) {
		r.stalled = true
		r.cancel(ErrStalled)
		return
	}
	r.read = 0
	r.timer.Reset(r.window)
}

func (r *rateReader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	r.mu.Lock()
	r.read += int64(n)
	stalled := r.stalled
	r.mu.Unlock()
	if err != nil && stalled {
		return n, fmt.Errorf("%w: less than %d KiB/s over %s", ErrStalled, MinRate>>10, r.window)
	}
	return n, err
}

func (r *rateReader) Close() error {
	r.timer.Stop()
	err := r.body.Close()
	r.cancel(nil)
	return err
}

// openLocal opens a file:// URL through the input gate: a regular file
// (a named pipe is refused without blocking on it).
func openLocal(u *url.URL) (io.ReadCloser, error) {
	fsys, err := inputfile.Dir(filepath.Dir(u.Path))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w (no such directory)", ErrNotFound)
		}
		return nil, err
	}
	f, err := fsys.Open(filepath.Base(u.Path))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w (no such file)", ErrNotFound)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	return f, nil
}

// readAll reads a whole file of at most limit bytes.
func (c *Client) readAll(ctx context.Context, r *Repo, u *url.URL, limit int64) ([]byte, error) {
	body, err := c.open(ctx, r, u)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	data, err := io.ReadAll(&sizeLimit{r: body, left: limit, err: fmt.Errorf("larger than %d bytes: %w", limit, ErrTooLarge)})
	if err != nil {
		return nil, err
	}
	return data, nil
}

// redact is u without its user information and query, for messages.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery, c.ForceQuery = "", false
	return c.String()
}
