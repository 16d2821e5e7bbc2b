package main

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/plan/lockfile"
)

// TestMirrorHostileRegistry mirrors from a registry that serves a 64 MiB
// manifest (with and without Content-Length) and stalls a blob mid-body,
// beside a healthy image: the healthy image is mirrored, the others fail
// with one line each within --timeout and --retries, and the process
// stays under 100 MB of peak RSS (measured with GNU time).
func TestMirrorHostileRegistry(t *testing.T) {
	bin := e2eBinary(t)
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	done := make(chan struct{})
	var host string
	var stalledBlob, stalledSize string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/v2/huge/") && strings.Contains(r.URL.Path, "/manifests/"):
			// 64 MiB of JSON-ish bytes, announced or not.
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			if strings.HasPrefix(r.URL.Path, "/v2/huge/sized/") {
				w.Header().Set("Content-Length", strconv.Itoa(64<<20))
			}
			chunk := []byte(strings.Repeat(" ", 1<<20))
			for range 64 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case r.Method == http.MethodGet && stalledBlob != "" && r.URL.Path == stalledBlob:
			w.Header().Set("Content-Length", stalledSize)
			w.WriteHeader(http.StatusOK)
			w.Write(make([]byte, 1000))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-done:
			}
		default:
			inner.ServeHTTP(w, r)
		}
	}))
	defer srv.Close()
	defer close(done)
	host = strings.TrimPrefix(srv.URL, "http://")
	p := &testutil.Pusher{Host: host}
	healthy, err := p.PushImage("app/healthy", "amd64", []testutil.Layer{testutil.NewLayer(1, 2<<20)})
	if err != nil {
		t.Fatal(err)
	}
	stall := testutil.NewLayer(2, 300000)
	stalled, err := p.PushImage("app/stalled", "amd64", []testutil.Layer{stall})
	if err != nil {
		t.Fatal(err)
	}
	stalledBlob, stalledSize = "/v2/app/stalled/blobs/"+stall.Desc.Digest.String(), strconv.FormatInt(stall.Desc.Size, 10)
	digest := "@sha256:" + strings.Repeat("e", 64)
	refs := []string{healthy, stalled, host + "/huge/sized" + digest, host + "/huge/chunked" + digest}

	work := t.TempDir()
	writeLock := func(name string, refs []string) string {
		lock := plan.Plan{Schema: plan.Schema, Arch: "x86_64", Profile: "hostile"}
		for _, r := range refs {
			lock.Images = append(lock.Images, plan.Image{Ref: r, Pinned: true, Uses: []plan.ImageUse{{Component: "test"}}})
		}
		path := filepath.Join(work, name)
		data, err := lockfile.Encode(&lock)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	e := newUserEnv(t)
	mirror := func(lock, to string) (procResult, int64) {
		return e.execPeakRSS(t, bin, "mirror", "--lock", lock, "--quiet", "--timeout", "1s", "--retries", "2", "--to", "oci:"+filepath.Join(work, to))
	}

	r, rss := mirror(writeLock("all.json", refs), "images")
	if r.code != exitError || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "(and 2 more of 4 images failed)") ||
		!strings.Contains(r.stderr, stalled+": blob "+stall.Desc.Digest.String()+" from "+host+"/app/stalled: registry stopped sending data: less than 16384 bytes in 1s (blobs must arrive at 16 KiB/s at least) (gave up after 2 attempts)") {
		t.Fatalf("mirror from a hostile registry: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	idx := string(mustReadFile(t, filepath.Join(work, "images", "index.json")))
	if !strings.Contains(idx, healthy) || strings.Count(idx, `"org.opencontainers.image.ref.name"`) != 1 {
		t.Errorf("index.json should list the healthy image only:\n%s", idx)
	}
	t.Logf("mirror against a registry serving two 64 MiB manifests and a stalled blob: peak RSS %.1f MiB (GNU time)", float64(rss)/1024)
	if rss <= 0 || rss >= 100*1000*1000/1024 {
		t.Errorf("peak RSS %d KiB, want under 100 MB", rss)
	}

	// The manifests' own message.
	r, rss = mirror(writeLock("huge.json", refs[2:]), "images-huge")
	want := ": response too large: the registry sends 67108864 bytes, and manifests and other metadata are limited to 4194304 bytes (as podman and skopeo limit them) (and 1 more of 2 images failed)"
	if r.code != exitError || !strings.HasPrefix(r.stderr, "error: mirroring to oci:"+filepath.Join(work, "images-huge")+": "+refs[2]+": ") || !strings.HasSuffix(strings.TrimSpace(r.stderr), want) {
		t.Errorf("mirror of a 64 MiB manifest: exit %d, stderr %q\nwant it to end %q", r.code, r.stderr, want)
	}
	if rss >= 100*1000*1000/1024 {
		t.Errorf("peak RSS %d KiB, want under 100 MB", rss)
	}
}
