package registryclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/containers/image/v5/pkg/tlsclientconfig"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
)

// Limits on what a registry may send. Manifests, indexes, tokens and error
// bodies are read into memory, so they are capped: MaxMetadataSize is
// containers/image's limit for manifests (iolimits.MaxManifestBodySize), so
// anything podman and skopeo can pull, this can. Blob content is never
// buffered: it streams, under the stall timeout.
const (
	MaxMetadataSize = 4 << 20
	// maxErrorBody is what is kept of a non-2xx answer's body: enough for
	// the registry's JSON error.
	maxErrorBody = 64 << 10
)

// Sentinels for what the transport refuses; wrapped by its errors.
var (
	// ErrTooLarge is a manifest, token or other metadata response larger
	// than MaxMetadataSize.
	ErrTooLarge = errors.New("response too large")
	// ErrStalled is a response body that delivered no byte for Timeout.
	ErrStalled = errors.New("registry stopped sending data")
)

// RequestError is a request that failed every attempt the transport made.
// It deliberately does not unwrap to its cause: go-containerregistry's own
// retry layer would otherwise retry it once more per attempt made here.
type RequestError struct {
	Method string
	// URL is the request's URL without its query (a redirect's query can
	// carry a signature).
	URL      string
	Attempts int
	cause    error
	// replayable is false for a request the transport could not send
	// again (blob upload data): Retry retries the whole upload instead.
	replayable bool
}

// Error is the cause and the attempts; net/http's url.Error around it
// names the request.
func (e *RequestError) Error() string {
	if e.Attempts > 1 {
		return fmt.Sprintf("%v (gave up after %d attempts)", e.cause, e.Attempts)
	}
	return e.cause.Error()
}

// Cause is the last attempt's error.
func (e *RequestError) Cause() error { return e.cause }

// stack is the HTTP stack every registry request goes through, below
// go-containerregistry's auth and scheme handling:
//
//	retries (failed requests and 408/429/5xx answers, with backoff)
//	  -> limits (metadata read whole, capped; blob bodies watched for stalls)
//	    -> per-host transports (certs.d CAs and client certificates, TLS
//	       verification unless the host is insecure, connect, TLS-handshake,
//	       response-header and write timeouts)
type stack struct {
	attempts int
	timeout  time.Duration
	inner    http.RoundTripper
}

var _ http.RoundTripper = (*stack)(nil)

// newTransport builds the stack for o. base replaces the per-host
// transports (tests inject faults with it).
func newTransport(o Options, tls *tlsConfigs) *stack {
	var base http.RoundTripper = &hostTransports{timeout: o.timeout(), tls: tls, hosts: map[string]*http.Transport{}}
	if o.Transport != nil {
		base = o.Transport
	}
	return &stack{attempts: o.Attempts(), timeout: o.timeout(), inner: &limitTransport{inner: base, timeout: o.timeout()}}
}

// retryStatus are the answers worth asking again.
var retryStatus = map[int]bool{
	http.StatusRequestTimeout: true, http.StatusTooManyRequests: true,
	http.StatusInternalServerError: true, http.StatusBadGateway: true,
	http.StatusServiceUnavailable: true, http.StatusGatewayTimeout: true,
}

func (t *stack) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	replayable := canReplay(req)
	for n := 1; ; n++ {
		attempt := req
		if n > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			attempt = req.Clone(ctx)
			attempt.Body = body
		}
		resp, err := t.inner.RoundTrip(attempt)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !retryableError(err) {
				return nil, err // final whatever the attempt: no need to hide it
			}
			if !replayable || n >= t.attempts {
				return nil, &RequestError{Method: req.Method, URL: redactURL(req), Attempts: n, cause: err, replayable: replayable}
			}
			slog.Debug("retrying registry request", "method", req.Method, "url", redactURL(req), "attempt", n, "error", err)
			if !sleep(ctx, Backoff(n)) {
				return nil, ctx.Err()
			}
			continue
		}
		if !retryStatus[resp.StatusCode] || !replayable || n >= t.attempts {
			return resp, nil
		}
		wait := max(Backoff(n), retryAfter(resp))
		resp.Body.Close()
		slog.Debug("retrying registry request", "method", req.Method, "url", redactURL(req), "attempt", n, "status", resp.StatusCode)
		if !sleep(ctx, wait) {
			return nil, ctx.Err()
		}
	}
}

// canReplay says whether the transport may send req again: not the data
// of a blob upload (the registry's upload session has half of it by then;
// the caller restarts the upload instead), nor a body it cannot rewind.
func canReplay(req *http.Request) bool {
	if isUploadData(req) {
		return false
	}
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// isUploadData reports whether req carries blob content to an upload
// session (a PATCH, or a PUT or POST with a body, under /blobs/uploads/).
func isUploadData(req *http.Request) bool {
	if !strings.Contains(req.URL.Path, "/blobs/uploads/") {
		return false
	}
	return req.Method == http.MethodPatch || (req.Body != nil && req.Body != http.NoBody && req.ContentLength != 0)
}

// retryAfter is the wait a 429 or 503 asks for, capped at a minute.
func retryAfter(resp *http.Response) time.Duration {
	s := resp.Header.Get("Retry-After")
	if s == "" {
		return 0
	}
	if secs, err := strconv.Atoi(s); err == nil && secs > 0 {
		return min(time.Duration(secs)*time.Second, time.Minute)
	}
	if at, err := http.ParseTime(s); err == nil {
		return min(max(time.Until(at), 0), time.Minute)
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// retryableError says whether a failed request may succeed when sent
// again: timeouts, stalls, refused, reset or dropped connections. TLS
// verification failures, protocol mismatches and oversized answers are
// final.
func retryableError(err error) bool {
	if errors.Is(err, ErrTooLarge) {
		return false
	}
	var cve *tls.CertificateVerificationError
	if errors.As(err, &cve) {
		return false
	}
	return Temporary(err)
}

// redactURL is the request's URL without query and credentials.
func redactURL(req *http.Request) string {
	u := *req.URL
	u.RawQuery, u.ForceQuery, u.Fragment, u.User = "", false, "", nil
	return u.String()
}

// blobPath matches the content of a blob: GET /v2/<name>/blobs/<digest>.
var blobPath = regexp.MustCompile(`^/v2/.+/blobs/[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$`)

// isBlobContent reports whether req fetches blob content: a blob GET, or a
// redirect it led to (registries send blobs from a CDN).
func isBlobContent(req *http.Request) bool {
	for r := req; r != nil; {
		if r.Method == http.MethodGet && blobPath.MatchString(r.URL.Path) {
			return true
		}
		if r.Response == nil {
			return false
		}
		r = r.Response.Request
	}
	return false
}

// limitTransport reads every answer but blob content whole, within
// MaxMetadataSize and the stall timeout, so that a stall or a drop while
// reading a manifest is a failed request the retry layer sends again, and
// a registry cannot make the process hold more than the cap. Blob bodies
// stream, watched for stalls.
type limitTransport struct {
	inner   http.RoundTripper
	timeout time.Duration
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.inner.RoundTrip(req)
	if err != nil || req.Method == http.MethodHead {
		return resp, err
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if ok && isBlobContent(req) {
		resp.Body = newIdleReader(resp.Body, t.timeout)
		return resp, nil
	}
	limit := int64(maxErrorBody)
	if ok {
		limit = MaxMetadataSize
		if resp.ContentLength > limit {
			resp.Body.Close()
			return nil, tooLarge(resp.ContentLength)
		}
	}
	data, err := readLimited(newIdleReader(resp.Body, t.timeout), limit, resp.ContentLength)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		if ok {
			return nil, tooLarge(-1)
		}
		data = data[:limit] // an error body: the start says what went wrong
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	return resp, nil
}

func tooLarge(size int64) error {
	got := "more"
	if size >= 0 {
		got = strconv.FormatInt(size, 10) + " bytes"
	}
	return fmt.Errorf("%w: the registry sends %s, and manifests and other metadata are limited to %d bytes (as podman and skopeo limit them)",
		ErrTooLarge, got, MaxMetadataSize)
}

// readLimited reads r to its end or to limit+1 bytes, whichever is first.
func readLimited(r io.Reader, limit, size int64) ([]byte, error) {
	var b bytes.Buffer
	if size > 0 && size <= limit {
		b.Grow(int(size))
	}
	_, err := io.Copy(&b, io.LimitReader(r, limit+1))
	return b.Bytes(), err
}

// idleReader fails a body that delivers nothing for d while it is read
// (the time the reader spends elsewhere does not count): it closes the
// body, which unblocks the read, and reports ErrStalled.
type idleReader struct {
	rc      io.ReadCloser
	d       time.Duration
	timer   *time.Timer
	stalled atomic.Bool
}

func newIdleReader(rc io.ReadCloser, d time.Duration) *idleReader {
	r := &idleReader{rc: rc, d: d}
	r.timer = time.AfterFunc(time.Hour, func() {
		r.stalled.Store(true)
		rc.Close()
	})
	r.timer.Stop()
	return r
}

func (r *idleReader) Read(p []byte) (int, error) {
	r.timer.Reset(r.d)
	n, err := r.rc.Read(p)
	r.timer.Stop()
	if r.stalled.Load() {
		return n, fmt.Errorf("%w for %s", ErrStalled, r.d)
	}
	return n, err
}

func (r *idleReader) Close() error {
	r.timer.Stop()
	return r.rc.Close()
}

// hostTransports keeps one http.Transport per registry host, each with
// that host's TLS settings.
type hostTransports struct {
	timeout time.Duration
	tls     *tlsConfigs
	mu      sync.Mutex
	hosts   map[string]*http.Transport
}

func (h *hostTransports) RoundTrip(req *http.Request) (*http.Response, error) {
	// go-containerregistry falls back to plain HTTP when HTTPS fails for
	// loopback and private (RFC 1918) addresses; podman and skopeo never
	// do for a registry whose TLS they verify. Refused here, before a
	// connection, so that neither credentials nor trust go over HTTP
	// without the user asking (loopback stays allowed, as documented).
	if req.URL.Scheme == "http" && !h.tls.insecure(req.URL.Host) && !isLoopback(req.URL.Host) {
		return nil, fmt.Errorf("refusing plain HTTP to %s: its TLS is verified (--tls-verify=false or --insecure-registry %s allow HTTP)", req.URL.Host, req.URL.Host)
	}
	t, err := h.get(req.URL.Host)
	if err != nil {
		return nil, err
	}
	return t.RoundTrip(req)
}

func (h *hostTransports) get(host string) (*http.Transport, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.hosts[host]; t != nil {
		return t, nil
	}
	cfg, err := h.tls.config(host)
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: h.timeout, KeepAlive: 30 * time.Second}
	t := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &writeDeadlineConn{Conn: c, d: h.timeout}, nil
		},
		TLSClientConfig:       cfg,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   50,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   h.timeout,
		ResponseHeaderTimeout: h.timeout,
		ExpectContinueTimeout: time.Second,
	}
	h.hosts[host] = t
	return t, nil
}

// isLoopback reports whether host (host[:port]) is localhost or a loopback
// address.
func isLoopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// writeDeadlineConn fails a write the peer does not take within d: a
// registry that stops reading an upload.
type writeDeadlineConn struct {
	net.Conn
	d time.Duration
}

func (c *writeDeadlineConn) Write(b []byte) (int, error) {
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.d)); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// tlsConfigs makes the TLS configuration of each host as podman and skopeo
// do: CA certificates (*.crt) and client certificates (*.cert + *.key) from
// the host's certs.d directory, read by containers/image's tlsclientconfig;
// verification off only for insecure hosts.
type tlsConfigs struct {
	// certDir, when set, is used for every host (--cert-dir).
	certDir string
	// certDirs are the certs.d directories searched, in order, for a
	// <host[:port]> subdirectory.
	certDirs []string
	insecure func(host string) bool
}

func (c *tlsConfigs) config(host string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.insecure(host) {
		cfg.InsecureSkipVerify = true
	}
	dir := c.certDir
	if dir == "" {
		dir = findCertDir(c.certDirs, host)
	}
	if dir != "" {
		if err := setupCertificates(dir, cfg); err != nil {
			if c.certDir != "" {
				return nil, fmt.Errorf("--cert-dir %s: %w", dir, err)
			}
			return nil, fmt.Errorf("reading TLS certificates for %s from %s: %w", host, dir, err)
		}
	}
	return cfg, nil
}

// setupCertificates is containers/image's tlsclientconfig.SetupCertificates
// on dir, with every file it would read (*.crt, *.cert, *.key) taken
// through the input gate first: a regular file of at most MaxConfigFile
// bytes (a ca.crt that is /dev/zero or a named pipe is refused at once
// instead of read for ever). The gated bytes are what containers/image
// reads, from a private copy, so nothing can be swapped in between.
func setupCertificates(dir string, cfg *tls.Config) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "microshift-compose-certs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".crt") && !strings.HasSuffix(n, ".cert") && !strings.HasSuffix(n, ".key") {
			continue
		}
		data, err := inputfile.Read("certificate file", filepath.Join(dir, n), MaxConfigFile)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, n), data, 0o600); err != nil {
			return err
		}
	}
	if err := tlsclientconfig.SetupCertificates(tmp, cfg); err != nil {
		return errors.New(strings.ReplaceAll(err.Error(), tmp, dir))
	}
	return nil
}
