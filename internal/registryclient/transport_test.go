package registryclient_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// The timeout tests use a short --timeout and check that each failure is
// retried (the server counts attempts) and ends in an error; the test's own
// deadline is what "never hangs" means. Nothing asserts on durations.

// fast is registry access with a short timeout and quick retries, for
// tests where every attempt fails.
func fast(t *testing.T) registryclient.Options { return withTimeout(t, 200*time.Millisecond) }

// patient has a timeout no healthy local request reaches on a busy machine,
// for tests where an attempt must succeed.
func patient(t *testing.T) registryclient.Options { return withTimeout(t, 2*time.Second) }

func withTimeout(t *testing.T, d time.Duration) registryclient.Options {
	o, err := registryclient.Options{Timeout: d, Retries: 3}.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// deadline is the context of a test that must not hang.
func deadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustNotHang(t *testing.T, ctx context.Context) {
	t.Helper()
	if ctx.Err() != nil {
		t.Fatal("the request hung until the test's deadline")
	}
}

// pushRandom pushes a random image and returns its digest reference.
func pushRandom(t *testing.T, host, repo string, opts ...remote.Option) name.Digest {
	t.Helper()
	img, err := random.Image(64<<10, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(host + "/" + repo + ":v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, opts...); err != nil {
		t.Fatal(err)
	}
	d, _ := img.Digest()
	return ref.Context().Digest(d.String())
}

func TestNoAnswerIsRetriedThenFails(t *testing.T) {
	ctx := deadline(t)
	s := testutil.NewFaultyRegistry(t)
	ref := pushRandom(t, s.Host, "app/x")
	s.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
		if strings.Contains(r.URL.Path, "/manifests/") {
			s.Hang(r)
			return true
		}
		return false
	})
	o := fast(t)
	_, err := remote.Get(ref, o.Remote(ctx)...)
	mustNotHang(t, ctx)
	var rerr *registryclient.RequestError
	if !errors.As(err, &rerr) || rerr.Attempts != 3 || !containsAny(err.Error(), []string{"timeout awaiting response headers", "registry did not answer in time"}) {
		t.Fatalf("Get from a registry that never answers = %v; want a timeout after 3 attempts", err)
	}
	if got := s.Requests(http.MethodGet, "/v2/app/x/manifests/"+ref.DigestStr()); got != 3 {
		t.Errorf("the registry saw %d requests, want 3 (--retries)", got)
	}
	if registryclient.Temporary(err) {
		t.Errorf("Temporary(%v) = true; the transport already retried it", err)
	}
}

func TestStalledManifestBodyIsRetried(t *testing.T) {
	ctx := deadline(t)
	s := testutil.NewFaultyRegistry(t)
	ref := pushRandom(t, s.Host, "app/x")
	path := "/v2/app/x/manifests/" + ref.DigestStr()
	s.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Path == path && r.Method == http.MethodGet && n <= 2 {
			// Headers and a few bytes, then nothing.
			w.Header().Set("Content-Type", "application/vnd.docker.distribution.manifest.v2+json")
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(`{"schemaVersion":`))
			w.(http.Flusher).Flush()
			s.Hang(r)
			return true
		}
		return false
	})
	o := patient(t)
	d, err := remote.Get(ref, o.Remote(ctx)...)
	mustNotHang(t, ctx)
	if err != nil || d.Digest.String() != ref.DigestStr() {
		t.Fatalf("Get with two stalled answers = %v, %v; want the manifest on the third attempt", d, err)
	}
	if got := s.Requests(http.MethodGet, path); got != 3 {
		t.Errorf("the registry saw %d requests, want 3", got)
	}
}

func TestStalledBlobBody(t *testing.T) {
	ctx := deadline(t)
	s := testutil.NewFaultyRegistry(t)
	ref := pushRandom(t, s.Host, "app/x")
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	digest, _ := layers[0].Digest()
	path := "/v2/app/x/blobs/" + digest.String()
	s.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Path == path && r.Method == http.MethodGet {
			w.Header().Set("Content-Length", "65536")
			w.WriteHeader(http.StatusOK)
			w.Write(make([]byte, 4096))
			w.(http.Flusher).Flush()
			s.Hang(r)
			return true
		}
		return false
	})
	o := fast(t)
	rt, err := o.PullTransport(ctx, ref.Context())
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		t.Fatalf("GET blob: %v", err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	mustNotHang(t, ctx)
	if !errors.Is(err, registryclient.ErrStalled) || n != 4096 {
		t.Fatalf("reading a stalled blob = %d bytes, %v; want 4096 bytes, then ErrStalled", n, err)
	}
	if !registryclient.Temporary(err) {
		t.Errorf("Temporary(%v) = false: a stalled body must be retried", err)
	}
	calls := 0
	err = o.Retry(ctx, func() error { calls++; return err })
	if calls != 3 || !errors.Is(err, registryclient.ErrStalled) {
		t.Errorf("Retry of a stalled body: %d calls, %v; want 3", calls, err)
	}
}

func TestSilentServers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scheme string
		want   string
	}{
		// Accepts the connection, reads nothing, says nothing. The
		// phase's own timeout or the whole request's, whichever fires
		// first (they are both --timeout).
		{"http", "http", "timeout awaiting response headers|registry did not answer in time"},
		// The same behind https: the TLS handshake never completes.
		{"tls", "https", "TLS handshake timeout|registry did not answer in time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := deadline(t)
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			var accepted atomic.Int32
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					accepted.Add(1)
					go func() { io.Copy(io.Discard, c) }()
				}
			}()
			o := fast(t)
			_, err = o.RoundTripper().RoundTrip(mustReq(t, ctx, tc.scheme+"://"+l.Addr().String()+"/v2/"))
			mustNotHang(t, ctx)
			if err == nil || !containsAny(err.Error(), strings.Split(tc.want, "|")) {
				t.Fatalf("request to a silent server = %v; want %q", err, tc.want)
			}
			if got := accepted.Load(); got != 3 {
				t.Errorf("%d connections, want 3 (every attempt)", got)
			}
		})
	}
}

// TestStalledUpload is a registry that stops reading an upload: the write
// times out, and the upload is retried whole.
func TestStalledUpload(t *testing.T) {
	ctx := deadline(t)
	s := testutil.NewFaultyRegistry(t)
	img, err := random.Image(8<<20, 1) // more than the socket buffers hold
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	var patches atomic.Int32
	s.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.Method == http.MethodPatch && patches.Add(1) == 1 {
			s.Hang(r) // never reads the body
			return true
		}
		return false
	})
	o := patient(t)
	repo := mustRepo(t, s.Host+"/app/up")
	pusher, err := remote.NewPusher(o.Remote(ctx)...)
	if err != nil {
		t.Fatal(err)
	}
	err = o.Retry(ctx, func() error { return pusher.Upload(ctx, repo, layers[0]) })
	mustNotHang(t, ctx)
	if err != nil {
		t.Fatalf("upload after a stalled attempt = %v, want success on a retry", err)
	}
	if got := patches.Load(); got < 2 {
		t.Errorf("%d PATCH requests, want the stalled one and a retry", got)
	}
}

func TestOversizedManifests(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 64<<20)
	for _, tc := range []struct {
		name    string
		handler func(w http.ResponseWriter)
	}{
		{"content-length", func(w http.ResponseWriter) {
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			w.Write(big)
		}},
		{"chunked", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			w.WriteHeader(http.StatusOK)
			for i := 0; i < len(big); i += 1 << 20 {
				if _, err := w.Write(big[i : i+1<<20]); err != nil {
					return
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := deadline(t)
			var gets atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/v2/" {
					return
				}
				gets.Add(1)
				tc.handler(w)
			}))
			defer srv.Close()
			host := strings.TrimPrefix(srv.URL, "http://")
			o := patient(t) // about size: no timeout may end it first on a busy machine
			_, err := remote.Get(mustRef(t, host+"/app/big:v1"), o.Remote(ctx)...)
			if !errors.Is(err, registryclient.ErrTooLarge) {
				t.Fatalf("Get of a 64 MiB manifest = %v, want ErrTooLarge", err)
			}
			if gets.Load() != 1 {
				t.Errorf("%d GETs, want 1: an oversized manifest is not retried", gets.Load())
			}
		})
	}
}

func TestRetryAfterAndStatusRetries(t *testing.T) {
	ctx := deadline(t)
	s := testutil.NewFaultyRegistry(t)
	ref := pushRandom(t, s.Host, "app/x")
	path := "/v2/app/x/manifests/" + ref.DigestStr()
	s.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Path == path && n <= 2 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader([]int{http.StatusTooManyRequests, http.StatusBadGateway}[n-1])
			return true
		}
		return false
	})
	o := patient(t)
	if _, err := remote.Get(ref, o.Remote(ctx)...); err != nil {
		t.Fatalf("Get after 429 and 502 = %v", err)
	}
	if got := s.Requests(http.MethodGet, path); got != 3 {
		t.Errorf("%d GETs, want 3 (go-containerregistry must not retry on top)", got)
	}
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustRepo(t *testing.T, s string) name.Repository {
	t.Helper()
	r, err := name.NewRepository(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustReq(t *testing.T, ctx context.Context, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }

// go-containerregistry retries a private (RFC 1918) registry over plain
// HTTP when HTTPS fails; podman does not, and neither do we unless the
// registry is insecure: the HTTP request is refused before it is sent.
// Loopback keeps its documented HTTP fallback.
func TestNoPlainHTTPFallbackForPrivateRegistries(t *testing.T) {
	keychain := authn.NewMultiKeychain() // anonymous: no auth file is read
	for _, tc := range []struct {
		name, host string
		insecure   []string
		refused    bool
	}{
		{"private address, TLS verified", "10.255.255.1:5000", nil, true},
		{"private address, insecure", "10.255.255.1:5000", []string{"10.255.255.1:5000"}, false},
		{"192.168 address", "192.168.255.254:5000", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := registryclient.Options{Timeout: 100 * time.Millisecond, Retries: 1, Insecure: tc.insecure, Keychain: keychain}
			ref, err := name.ParseReference(tc.host + "/edge/app:1")
			if err != nil {
				t.Fatal(err)
			}
			_, err = remote.Get(ref, o.Remote(context.Background())...)
			if err == nil {
				t.Fatalf("Get(%s) succeeded against an address nothing listens on", ref)
			}
			want := "refusing plain HTTP to " + tc.host
			if got := strings.Contains(err.Error(), want); got != tc.refused {
				t.Errorf("Get(%s) = %v; want refused over HTTP: %v", ref, err, tc.refused)
			}
		})
	}
	// Loopback: HTTPS fails against a plain HTTP registry, HTTP works.
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ref, _ := name.ParseReference(host + "/edge/app:1")
	img, _ := random.Image(64, 1)
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	o := registryclient.Options{Timeout: 2 * time.Second, Retries: 1, Keychain: keychain}
	if _, err := remote.Get(ref, o.Remote(context.Background())...); err != nil {
		t.Errorf("Get(%s) over loopback HTTP = %v", ref, err)
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
