package airgap_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// testDeadline is the context of a mirror that must end by itself; it
// is far longer than any bound under test, so reaching it means a hang.
func testDeadline(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// A registry that trickles one image's manifest, or holds it off with a
// Retry-After of an hour, fails that image (naming what happened) and
// the other images of the same registry are mirrored.
func TestMirrorStalledImage(t *testing.T) {
	reg := testutil.NewFaultyRegistry(t)
	im := newFaultImages(t, reg.Host)
	refs := append([]string{im.ref}, im.others...)
	manifest := "/v2/app/target/manifests/" + im.ref[strings.Index(im.ref, "@")+1:]
	for _, tc := range []struct {
		name  string
		fault func(w http.ResponseWriter, r *http.Request)
		want  error
		msg   string
	}{
		{"manifest trickled", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			w.Header().Set("Content-Length", "2000")
			w.WriteHeader(http.StatusOK)
			for range 2000 {
				if _, err := w.Write([]byte{' '}); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}, registryclient.ErrTimeout, "no complete answer within --timeout 2s (headers and body) (gave up after 2 attempts)"},
		{"Retry-After an hour", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
		}, registryclient.ErrRetryAfter, `429 Too Many Requests with Retry-After: "3600" (1h0m0s)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testDeadline(t)
			reg.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
				if r.URL.Path == manifest {
					tc.fault(w, r)
					return true
				}
				return false
			})
			o := fastOpts()
			o.Registry.Timeout, o.Registry.Retries = 2*time.Second, 2
			dir := t.TempDir()
			sum, err := airgap.Mirror(c, refs, airgap.OCI(dir), o)
			if c.Err() != nil {
				t.Fatal("the mirror ran into the test's deadline")
			}
			if !errors.Is(err, tc.want) || !strings.HasPrefix(err.Error(), im.ref+": ") || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Mirror() = %v\nwant %v for %s with %q", err, tc.want, im.ref, tc.msg)
			}
			if sum == nil || sum.Images != 2 || len(readIndex(t, dir).Manifests) != 2 {
				t.Errorf("Mirror() = %+v, want the 2 other images mirrored", sum)
			}
		})
	}
}

// A push to a registry that answers 429 to everything ends: with a
// Retry-After beyond the budget at the first answer, without one after
// the attempts.
func TestPushToThrottlingRegistryEnds(t *testing.T) {
	src := testutil.NewFaultyRegistry(t)
	im := newFaultImages(t, src.Host)
	dst := testutil.NewFaultyRegistry(t)
	for _, tc := range []struct {
		name       string
		retryAfter string
		want       string
	}{
		{"Retry-After an hour", "3600", `Retry-After: "3600" (1h0m0s)`},
		{"no Retry-After", "", "429 Too Many Requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testDeadline(t)
			dst.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
				if r.URL.Path == "/v2/" {
					return false
				}
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(http.StatusTooManyRequests)
				return true
			})
			o := fastOpts()
			o.Registry.Timeout, o.Registry.Retries = 2*time.Second, 2
			_, err := airgap.Mirror(c, []string{im.ref}, airgap.Target{Transport: airgap.TransportDocker, Registry: dst.Host, Prefix: "copy"}, o)
			if c.Err() != nil {
				t.Fatal("the push ran into the test's deadline")
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Mirror() to a registry answering 429 = %v, want an error with %q", err, tc.want)
			}
		})
	}
}
