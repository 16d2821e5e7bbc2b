package main

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

// TestMirrorKilledAndResumed SIGKILLs the real binary while it streams a
// blob, then reruns it: the partial file the kill left is discarded, and
// only the blob that was cut is fetched again (requests counted per path).
func TestMirrorKilledAndResumed(t *testing.T) {
	var (
		mu       sync.Mutex
		gets     = map[string]int{}
		hold     = make(chan struct{})
		released bool
		target   string
	)
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.Method == http.MethodGet {
			gets[r.URL.Path]++
		}
		stall := r.Method == http.MethodGet && r.URL.Path == target && !released
		mu.Unlock()
		if stall {
			// Send half of the blob, then hang until the test is done.
			rec := httptest.NewRecorder()
			inner.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(http.StatusOK)
			w.Write(body[:len(body)/2])
			w.(http.Flusher).Flush()
			select {
			case <-hold:
			case <-r.Context().Done():
			}
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer close(hold)
	host := strings.TrimPrefix(srv.URL, "http://")

	p := &testutil.Pusher{Host: host}
	big := testutil.NewLayer(1, 4<<20)
	var refs []string
	others := map[string]bool{} // every blob but the cut one, by hex digest
	for i := range 3 {
		layers := []testutil.Layer{testutil.NewLayer(uint64(10+i), 64<<10)}
		others[layers[0].Desc.Digest.Hex] = true
		if i == 0 {
			layers = append(layers, big)
		}
		cfg, _ := testutil.Image("amd64", layers)
		others[cfg.Digest().Hex] = true
		ref, err := p.PushImage("app/img"+strconv.Itoa(i), "amd64", layers)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	target = "/v2/app/img0/blobs/" + big.Desc.Digest.String()
	lock := plan.Plan{Schema: plan.Schema, Arch: "x86_64", Profile: "test"}
	for _, r := range refs {
		lock.Images = append(lock.Images, plan.Image{Ref: r, Pinned: true})
	}
	work := t.TempDir()
	lockPath := filepath.Join(work, "compose.lock.json")
	data, err := lockfile.Encode(&lock)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lockPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "images")
	blobs := filepath.Join(dir, "blobs", "sha256")

	bin := buildBinary(t)
	cmd := exec.Command(bin, "mirror", "--lock", lockPath, "--quiet", "--to", "oci:"+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the cut blob's partial file has bytes and every other
	// blob is in place.
	deadline := time.Now().Add(60 * time.Second)
	for {
		partial, complete := 0, 0
		entries, _ := os.ReadDir(blobs)
		for _, e := range entries {
			info, err := e.Info()
			switch {
			case err != nil:
			case strings.HasPrefix(e.Name(), "."+big.Desc.Digest.Hex+".partial-") && info.Size() > 0:
				partial++
			case others[e.Name()]:
				complete++
			}
		}
		if partial == 1 && complete == len(others) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the mirror never reached the cut blob (partial %d, complete %d of %d): %s", partial, complete, len(others), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(blobs, big.Desc.Digest.Hex)); !os.IsNotExist(err) {
		t.Fatalf("the cut blob is under its final name after the kill: %v", err)
	}

	mu.Lock()
	released = true
	gets = map[string]int{}
	mu.Unlock()
	r := runBinary(t, bin, work, "mirror", "--lock", lockPath, "--quiet", "--to", "oci:"+dir)
	if r.code != 0 {
		t.Fatalf("resumed mirror: exit %d: %s", r.code, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	for path, n := range gets {
		if strings.Contains(path, "/blobs/") && path != target {
			t.Errorf("resumed mirror fetched %s again (%d GETs); only the cut blob is missing", path, n)
		}
	}
	if gets[target] != 1 {
		t.Errorf("resumed mirror fetched the cut blob %d times, want 1", gets[target])
	}
	entries, _ := os.ReadDir(blobs)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("resumed mirror left %s", e.Name())
		}
	}
	if !strings.Contains(r.stdout, "mirrored 3 images") {
		t.Errorf("resumed mirror printed %q", r.stdout)
	}
}
