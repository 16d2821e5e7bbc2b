package registryclient_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// trickle answers 200 with a Content-Length of size and sends one byte
// every gap until the client goes away.
func trickle(s *testutil.FaultyRegistry, w http.ResponseWriter, r *http.Request, contentType string, size int, gap time.Duration) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(size))
	w.WriteHeader(http.StatusOK)
	for range size {
		if _, err := w.Write([]byte{' '}); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(gap):
		}
	}
}

// A manifest trickled a byte at a time, never idle for a whole --timeout,
// still fails each attempt at the timeout: it bounds the whole answer,
// headers and body.
func TestTrickledManifestTimesOut(t *testing.T) {
	ctx := deadline(t)
	s := testutil.NewFaultyRegistry(t)
	ref := pushRandom(t, s.Host, "app/x")
	path := "/v2/app/x/manifests/" + ref.DigestStr()
	gap := 60 * time.Millisecond
	s.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Path == path {
			trickle(s, w, r, "application/vnd.oci.image.manifest.v1+json", 1000, gap)
			return true
		}
		return false
	})
	o := withTimeout(t, 5*gap) // 5 gaps: an idle timer would never fire
	_, err := remote.Get(ref, o.Remote(ctx)...)
	mustNotHang(t, ctx)
	if !errors.Is(err, registryclient.ErrTimeout) || !strings.Contains(err.Error(), "no complete answer within --timeout 300ms (headers and body) (gave up after 3 attempts)") {
		t.Fatalf("Get of a trickled manifest = %v, want ErrTimeout after 3 attempts", err)
	}
	if got := s.Requests(http.MethodGet, path); got != 3 {
		t.Errorf("%d GETs, want 3 (each attempt timed out, and was retried)", got)
	}
}

// A blob trickled far below MinBlobRate fails as stalled; one sent well
// above it succeeds though it takes several timeouts: blobs have a
// progress bound, not a whole-life one.
func TestBlobRateFloor(t *testing.T) {
	for _, tc := range []struct {
		name  string
		size  int
		chunk int
		gap   time.Duration
		want  error
	}{
		// 1 byte per 20 ms: 50 B/s.
		{"trickled", 64 << 10, 1, 20 * time.Millisecond, registryclient.ErrStalled},
		// 16 KiB per 50 ms: 320 KiB/s, 20 times the floor; 512 KiB
		// take about 1.6 s, more than the timeout.
		{"slow but steady", 512 << 10, 16 << 10, 50 * time.Millisecond, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := deadline(t)
			s := testutil.NewFaultyRegistry(t)
			ref := pushRandom(t, s.Host, "app/x")
			data := bytes.Repeat([]byte{'b'}, tc.size)
			path := "/v2/app/x/blobs/sha256:" + strings.Repeat("0", 64)
			s.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
				if r.URL.Path != path {
					return false
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(data)))
				w.WriteHeader(http.StatusOK)
				for i := 0; i < len(data); i += tc.chunk {
					if _, err := w.Write(data[i : i+tc.chunk]); err != nil {
						return true
					}
					w.(http.Flusher).Flush()
					select {
					case <-r.Context().Done():
						return true
					case <-time.After(tc.gap):
					}
				}
				return true
			})
			o := withTimeout(t, time.Second)
			rt, err := o.PullTransport(ctx, ref.Context())
			if err != nil {
				t.Fatal(err)
			}
			req := mustReq(t, ctx, s.URL+path)
			resp, err := (&http.Client{Transport: rt}).Do(req)
			if err != nil {
				t.Fatalf("GET blob: %v", err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mustNotHang(t, ctx)
			if tc.want == nil {
				if err != nil || n != int64(tc.size) {
					t.Fatalf("reading a blob above the rate floor = %d bytes, %v; want all %d", n, err, tc.size)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), "blobs must arrive at 16 KiB/s at least") {
				t.Fatalf("reading a trickled blob = %d bytes, %v; want %v", n, err, tc.want)
			}
		})
	}
}

// A Retry-After longer than the retry budget (--retries x --timeout)
// fails the request at the first answer, naming the server's wait;
// within the budget it is waited for.
func TestRetryAfterBudget(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter string
		// want is in the error; "" for success after one wait.
		want string
	}{
		{"an hour", "3600", `429 Too Many Requests with Retry-After: "3600" (1h0m0s)`},
		{"a date next year", time.Now().AddDate(1, 0, 0).UTC().Format(http.TimeFormat), "429 Too Many Requests with Retry-After: "},
		{"huge", "99999999999999999999", `Retry-After: "99999999999999999999"`},
		{"one second", "1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := deadline(t)
			s := testutil.NewFaultyRegistry(t)
			ref := pushRandom(t, s.Host, "app/x")
			path := "/v2/app/x/manifests/" + ref.DigestStr()
			s.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
				if r.URL.Path == path && n == 1 {
					w.Header().Set("Retry-After", tc.retryAfter)
					w.WriteHeader(http.StatusTooManyRequests)
					return true
				}
				return false
			})
			o := patient(t) // a budget of 3 x 2s
			_, err := remote.Get(ref, o.Remote(ctx)...)
			mustNotHang(t, ctx)
			if tc.want == "" {
				if err != nil || s.Requests(http.MethodGet, path) != 2 {
					t.Fatalf("Get after Retry-After %s = %v, %d GETs; want success on the second", tc.retryAfter, err, s.Requests(http.MethodGet, path))
				}
				return
			}
			if !errors.Is(err, registryclient.ErrRetryAfter) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "of the retry budget (--retries 3 x --timeout 2s) is left") {
				t.Fatalf("Get after Retry-After %s = %v\nwant ErrRetryAfter with %q", tc.retryAfter, err, tc.want)
			}
			if registryclient.Temporary(err) {
				t.Errorf("Temporary(%v) = true: nothing may retry it", err)
			}
			if got := s.Requests(http.MethodGet, path); got != 1 {
				t.Errorf("%d GETs, want 1: the request fails at the first answer", got)
			}
		})
	}
}
