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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/containers/image/v5/pkg/tlsclientconfig"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
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
	// ErrStalled is a blob body that stopped making progress: less than
	// MinBlobRate on average over a Timeout of reading.
	ErrStalled = errors.New("registry stopped sending data")
	// ErrTimeout is a request whose whole answer (headers and body) did
	// not arrive within Timeout.
	ErrTimeout = errors.New("registry did not answer in time")
	// ErrRetryAfter is a 429 or 503 answer asking to wait longer than the
	// request's retry budget has left: the request fails at once instead.
	ErrRetryAfter = errors.New("registry asks to wait longer than the retry budget")
)

// MinBlobRate is the slowest a blob download may go: a blob body must
// deliver at least this many bytes per second, on average over each
// Timeout spent reading it (curl's --speed-limit/--speed-time), or it is
// ErrStalled. A blob has no whole-life bound (a 1 GiB layer on a slow link
// takes what it takes); this floor bounds it by its size instead: at most
// size/MinBlobRate plus one Timeout. 16 KiB/s is 128 kbit/s.
const MinBlobRate = 16 << 10

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

// Is matches the sentinels of this package's own limits (ErrTimeout,
// ErrStalled, ErrRetryAfter) in the cause, for callers that branch on
// them; other causes stay hidden (see RequestError).
func (e *RequestError) Is(target error) bool {
	switch target {
	case ErrTimeout, ErrStalled, ErrRetryAfter:
		return errors.Is(e.cause, target)
	}
	return false
}

// stack is the HTTP stack every registry request goes through, below
// go-containerregistry's auth and scheme handling:
//
//	retries (failed requests and 408/429/5xx answers, with backoff and
//	Retry-After, within a budget of Attempts x Timeout per request)
//	  -> limits (every answer but a blob's whole within Timeout, headers
//	     and body, metadata capped; blob bodies held to MinBlobRate)
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
	// The retry budget: what the attempts may take if each used its whole
	// timeout. A Retry-After beyond what is left of it is not waited for.
	budgetEnd := time.Now().Add(time.Duration(t.attempts) * t.timeout)
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
		if !retryStatus[resp.StatusCode] {
			return resp, nil
		}
		ra, raText := retryAfter(resp)
		if left := time.Until(budgetEnd); ra > left {
			resp.Body.Close()
			cause := fmt.Errorf("%w: %d %s with Retry-After: %s (%s), and %s of the retry budget (--retries %d x --timeout %s) is left",
				ErrRetryAfter, resp.StatusCode, http.StatusText(resp.StatusCode), raText, ra, max(left, 0).Round(time.Second), t.attempts, t.timeout)
			return nil, &RequestError{Method: req.Method, URL: redactURL(req), Attempts: n, cause: cause, replayable: replayable}
		}
		if !replayable || n >= t.attempts {
			return resp, nil
		}
		wait := max(Backoff(n), ra)
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

// retryAfter is the wait an answer asks for (Retry-After in seconds or as
// an HTTP date) and the header as sent, for messages; 0 when it asks none
// or says nothing readable.
func retryAfter(resp *http.Response) (time.Duration, string) {
	s := resp.Header.Get("Retry-After")
	if s == "" {
		return 0, ""
	}
	shown := s
	if len(shown) > 64 {
		shown = shown[:64] + "..."
	}
	shown = strconv.Quote(shown)
	if secs, err := strconv.ParseUint(s, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		// An overflowing number of seconds is a very long wait.
		return time.Duration(min(secs, uint64(1<<62/time.Second))) * time.Second, shown
	}
	if at, err := http.ParseTime(s); err == nil {
		return max(time.Until(at), 0).Round(time.Second), shown
	}
	return 0, shown
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
var blobPath = lazyregexp.New(`^/v2/.+/blobs/[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$`)

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

// limitTransport bounds every answer. Each request's whole answer,
// headers and body, must arrive within the timeout, read into memory
// within MaxMetadataSize (so that a stall, a trickle or a drop while
// reading a manifest is a failed request the retry layer sends again, and
// a registry cannot make the process hold more than the cap), except what
// may be large: a successful blob body streams, its headers within the
// timeout and its bytes at MinBlobRate at least; the data of a blob upload
// is bounded by the connection's write timeout, and the clock for its
// answer starts when the data is sent.
type limitTransport struct {
	inner   http.RoundTripper
	timeout time.Duration
}

// errWholeLife is the cause of a request context ended by the timeout.
var errWholeLife = errors.New("whole-request timeout")

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	parent := req.Context()
	ctx, cancel := context.WithCancelCause(parent)
	expire := func() { cancel(errWholeLife) }
	upload := isUploadData(req)
	var timer *time.Timer
	if !upload {
		timer = time.AfterFunc(t.timeout, expire)
	}
	resp, err := t.inner.RoundTrip(req.WithContext(ctx))
	if upload {
		timer = time.AfterFunc(t.timeout, expire)
	}
	if err != nil {
		timer.Stop()
		err = t.timedOut(ctx, parent, err)
		cancel(nil)
		return nil, err
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	if req.Method == http.MethodHead || (ok && isBlobContent(req)) {
		if !timer.Stop() {
			resp.Body.Close()
			cancel(nil)
			return nil, t.timedOut(ctx, parent, context.Canceled)
		}
		if req.Method == http.MethodHead {
			cancel(nil) // no body to read
			return resp, nil
		}
		resp.Body = &cancelBody{ReadCloser: newProgressReader(resp.Body, t.timeout, MinBlobRate), cancel: cancel}
		return resp, nil
	}
	defer cancel(nil)
	defer timer.Stop()
	limit := int64(maxErrorBody)
	if ok {
		limit = MaxMetadataSize
		if resp.ContentLength > limit {
			resp.Body.Close()
			return nil, tooLarge(resp.ContentLength)
		}
	}
	data, err := readLimited(resp.Body, limit, resp.ContentLength)
	resp.Body.Close()
	if err != nil {
		return nil, t.timedOut(ctx, parent, err)
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

// timedOut is err, or ErrTimeout when the request's own timeout (not the
// caller's context) ended it.
func (t *limitTransport) timedOut(ctx, parent context.Context, err error) error {
	if parent.Err() == nil && errors.Is(context.Cause(ctx), errWholeLife) {
		return fmt.Errorf("%w: no complete answer within --timeout %s (headers and body)", ErrTimeout, t.timeout)
	}
	return err
}

// cancelBody ends a streamed body's request context when it is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
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

// progressReader fails a body that delivers fewer than rate bytes a
// second, on average over each d spent in Read (the time the reader
// spends elsewhere, such as a push waiting on its destination, does not
// count): it closes the body, which unblocks the read, and reports
// ErrStalled.
type progressReader struct {
	rc   io.ReadCloser
	d    time.Duration
	want int64 // bytes due in each window of d

	mu      sync.Mutex
	timer   *time.Timer
	inRead  bool
	entered time.Time
	used    time.Duration // time in Read in this window
	got     int64         // bytes in this window
	stalled bool
}

func newProgressReader(rc io.ReadCloser, d time.Duration, rate int64) *progressReader {
	r := &progressReader{rc: rc, d: d, want: max(int64(d.Seconds()*float64(rate)), 1)}
	r.timer = time.AfterFunc(time.Hour, r.windowEnd)
	r.timer.Stop()
	return r
}

// windowEnd runs when a Read has used up the window: too few bytes end
// the body, enough start the next window.
func (r *progressReader) windowEnd() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.inRead || r.stalled {
		return
	}
	if r.got < r.want {
		r.stalled = true
		r.rc.Close()
		return
	}
	r.used, r.got, r.entered = 0, 0, time.Now()
	r.timer.Reset(r.d)
}

func (r *progressReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	r.inRead, r.entered = true, time.Now()
	r.timer.Reset(max(r.d-r.used, 0))
	r.mu.Unlock()
	n, err := r.rc.Read(p)
	r.mu.Lock()
	r.timer.Stop()
	r.inRead = false
	r.used += time.Since(r.entered)
	r.got += int64(n)
	if !r.stalled && r.used >= r.d {
		if r.got < r.want {
			r.stalled = true
		}
		r.used, r.got = 0, 0
	}
	stalled := r.stalled
	r.mu.Unlock()
	if stalled {
		return n, fmt.Errorf("%w: less than %d bytes in %s (blobs must arrive at %d KiB/s at least)", ErrStalled, r.want, r.d, MinBlobRate>>10)
	}
	return n, err
}

func (r *progressReader) Close() error {
	r.mu.Lock()
	r.timer.Stop()
	r.mu.Unlock()
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
