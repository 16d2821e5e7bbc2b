package testutil

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// FaultyRegistry is go-containerregistry's in-process registry behind a
// handler that counts requests per method and path and lets a test take
// over any of them: answer with an error, stall, drop the connection.
type FaultyRegistry struct {
	*httptest.Server
	// Host is host:port, for references.
	Host string

	mu     sync.Mutex
	counts map[string]int
	// fault, when set, may answer a request itself (returning true); n is
	// how many times its method and path were requested, this one included.
	fault func(w http.ResponseWriter, r *http.Request, n int) bool
	done  chan struct{}
}

// NewFaultyRegistry starts one for the test; it stops with the test, and
// requests left hanging (Hang) are released first.
func NewFaultyRegistry(t testing.TB) *FaultyRegistry {
	t.Helper()
	f := &FaultyRegistry{counts: map[string]int{}, done: make(chan struct{})}
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		key := r.Method + " " + r.URL.Path
		f.counts[key]++
		n := f.counts[key]
		fault := f.fault
		f.mu.Unlock()
		if fault != nil && fault(w, r, n) {
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	t.Cleanup(func() { close(f.done) }) // runs first: unblock hanging handlers
	f.Host = strings.TrimPrefix(f.URL, "http://")
	return f
}

// SetFault installs fn (nil: none) and resets the request counts.
func (f *FaultyRegistry) SetFault(fn func(w http.ResponseWriter, r *http.Request, n int) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault, f.counts = fn, map[string]int{}
}

// Requests is how many method requests path saw since the last SetFault.
func (f *FaultyRegistry) Requests(method, path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[method+" "+path]
}

// BlobGets lists the blob digests (hex) fetched with GET since the last
// SetFault, with how many times each was.
func (f *FaultyRegistry) BlobGets() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, n := range f.counts {
		if strings.HasPrefix(k, "GET ") && strings.Contains(k, "/blobs/sha256:") {
			out[k[strings.LastIndex(k, ":")+1:]] += n
		}
	}
	return out
}

// Hang blocks until the client goes away or the test ends: a registry
// that accepted the request and never answers (nor reads an upload).
func (f *FaultyRegistry) Hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.done:
	}
}
