package registryclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

func statusErr(code int) error {
	u, _ := url.Parse("https://quay.io/v2/org/repo/manifests/sha256:00")
	return &transport.Error{StatusCode: code, Request: &http.Request{Method: http.MethodGet, URL: u}}
}

func TestTemporary(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"500", statusErr(500), true},
		{"429", statusErr(429), true},
		{"404", statusErr(404), false},
		{"401", statusErr(401), false},
		{"dropped body", fmt.Errorf("reading: %w", io.ErrUnexpectedEOF), true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"cancelled", context.Canceled, false},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{"other", errors.New("manifest unknown"), false},
	} {
		if got := Temporary(tc.err); got != tc.want {
			t.Errorf("Temporary(%s: %v) = %t, want %t", tc.name, tc.err, got, tc.want)
		}
	}
}

func TestRetry(t *testing.T) {
	o := Options{Retries: 3}
	for _, tc := range []struct {
		name      string
		errs      []error
		wantCalls int
		wantErr   bool
	}{
		{"drop then success", []error{io.ErrUnexpectedEOF, nil}, 2, false},
		{"drops exhaust attempts", []error{io.ErrUnexpectedEOF, io.ErrUnexpectedEOF, io.ErrUnexpectedEOF, nil}, 3, true},
		{"HTTP answers are the transport's to retry", []error{statusErr(503), nil}, 1, true},
		{"final", []error{statusErr(404)}, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := o.Retry(context.Background(), func() error { calls++; return tc.errs[calls-1] })
			if calls != tc.wantCalls || (err != nil) != tc.wantErr {
				t.Errorf("Retry() = %v after %d calls; want %d calls, error %t", err, calls, tc.wantCalls, tc.wantErr)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	want := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond, 5 * time.Second, 5 * time.Second}
	for i, w := range want {
		if got := Backoff(i + 1); got != w {
			t.Errorf("Backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
}

func TestDescribe(t *testing.T) {
	const ref = "quay.io/org/repo@sha256:00"
	for _, tc := range []struct {
		err      error
		want     string
		sentinel error
	}{
		{statusErr(401), ref + ": authentication required (401 Unauthorized): log in with 'podman login quay.io' or pass --authfile (auth files are read where podman reads them: $REGISTRY_AUTH_FILE, ${XDG_RUNTIME_DIR}/containers/auth.json, ~/.config/containers/auth.json, ~/.docker/config.json)", ErrUnauthorized},
		{statusErr(403), ref + ": access denied (403 Forbidden): the credentials for quay.io may not read this repository", ErrDenied},
		{statusErr(404), ref + ": not found in the registry (404 Not Found): check the reference in the release file", ErrNotFound},
		{errors.New("boom"), ref + ": boom", nil},
	} {
		err := Describe(ref, tc.err)
		if err.Error() != tc.want || (tc.sentinel != nil && !errors.Is(err, tc.sentinel)) {
			t.Errorf("Describe(%v) = %v\nwant %s", tc.err, err, tc.want)
		}
	}
	if Describe(ref, nil) != nil {
		t.Error("Describe(nil) != nil")
	}
}
