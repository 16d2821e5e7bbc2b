package airgap_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

// faultImage is one single-arch image in the in-process registry: a shared
// base layer and its own layer, the one faults are aimed at.
type faultImage struct {
	ref    string
	layer  testutil.Layer // the target of faults
	blobs  int            // config + layers
	others []string       // refs of two more images that share the base
}

func newFaultImages(t *testing.T, host string) faultImage {
	t.Helper()
	p := &testutil.Pusher{Host: host}
	base := testutil.NewLayer(100, 200<<10)
	target := testutil.NewLayer(101, 300<<10)
	ref, err := p.PushImage("app/target", "amd64", []testutil.Layer{base, target})
	if err != nil {
		t.Fatal(err)
	}
	var others []string
	for i := range 2 {
		r, err := p.PushImage("app/other", "amd64", []testutil.Layer{base, testutil.NewLayer(uint64(110+i), 50<<10)})
		if err != nil {
			t.Fatal(err)
		}
		others = append(others, r)
	}
	return faultImage{ref: ref, layer: target, blobs: 3, others: others}
}

func TestMirrorFaults(t *testing.T) {
	reg := testutil.NewFaultyRegistry(t)
	im := newFaultImages(t, reg.Host)
	target := blobPath("app/target", im.layer.Desc.Digest)
	refs := append([]string{im.ref}, im.others...)

	for _, tc := range []struct {
		name  string
		fault func(w http.ResponseWriter, r *http.Request, n int) bool
		// wantErr is the exact error, "" for success.
		wantErr string
		// wantGets is how many GETs the target blob sees.
		wantGets int
		// wantStored says whether the target blob ends up in the layout.
		wantStored bool
	}{
		{
			name: "500s then success",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				if r.URL.Path == target && n <= 2 {
					http.Error(w, "try again", http.StatusInternalServerError)
					return true
				}
				return false
			},
			wantGets: 3, wantStored: true,
		},
		{
			name: "503 and 429 then success",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				if r.URL.Path == target && n <= 2 {
					w.WriteHeader([]int{http.StatusServiceUnavailable, http.StatusTooManyRequests}[n-1])
					return true
				}
				return false
			},
			wantGets: 3, wantStored: true,
		},
		{
			name: "connection dropped mid-blob",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				if r.URL.Path == target && r.Method == http.MethodGet && n <= 2 {
					dropHalf(w, im.layer.Data)
					return true
				}
				return false
			},
			wantGets: 3, wantStored: true,
		},
		{
			name: "blob that does not match its digest",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				if r.URL.Path == target && r.Method == http.MethodGet {
					bad := append([]byte(nil), im.layer.Data...)
					bad[len(bad)/2] ^= 0xff
					w.Header().Set("Content-Length", itoa(len(bad)))
					w.Write(bad)
					return true
				}
				return false
			},
			wantErr: "refusing blob from " + reg.Host + "/app/target: blob " + im.layer.Desc.Digest.String() +
				": content does not match its digest: got sha256:",
			wantGets: 1,
		},
		{
			name: "blob 404",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				if r.URL.Path == target {
					w.WriteHeader(http.StatusNotFound)
					return true
				}
				return false
			},
			wantErr: "blob " + im.layer.Desc.Digest.String() + ": not found in " + reg.Host +
				"/app/target (404 Not Found): the registry lacks a blob the image's manifest references",
			wantGets: 1,
		},
		{
			name: "persistent 500",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				if r.URL.Path == target {
					w.WriteHeader(http.StatusInternalServerError)
					return true
				}
				return false
			},
			wantErr:  reg.Host + "/app/target@" + im.layer.Desc.Digest.String() + ": GET http://" + reg.Host + target + ": unexpected status code 500 Internal Server Error",
			wantGets: 3,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			reg.SetFault(tc.fault)
			sum, err := airgap.Mirror(ctx, refs, airgap.OCI(dir), fastOpts())
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Mirror() = %v, want success", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), im.ref+": "+tc.wantErr)):
				t.Fatalf("Mirror() = %v\nwant %q", err, im.ref+": "+tc.wantErr+"...")
			}
			if got := reg.Requests("GET", target); got != tc.wantGets {
				t.Errorf("GET %s: %d requests, want %d", target, got, tc.wantGets)
			}
			files := blobFiles(t, dir)
			if _, ok := files[im.layer.Desc.Digest.Hex]; ok != tc.wantStored {
				t.Errorf("target blob stored: %t, want %t", ok, tc.wantStored)
			}
			for f := range files {
				if strings.Contains(f, ".partial-") {
					t.Errorf("left a partial blob behind: %s", f)
				}
			}
			// The other images are complete whatever happened to the target.
			idx := readIndex(t, dir)
			wantImages := 3
			if tc.wantErr != "" {
				wantImages = 2
			}
			if len(idx.Manifests) != wantImages || sum.Images != wantImages {
				t.Errorf("layout has %d images (summary %d), want %d", len(idx.Manifests), sum.Images, wantImages)
			}
		})
	}
}

// TestMirrorAuthErrors checks the one-line errors for 401, 403 and 404 on
// a manifest: they name the image and what to do.
func TestMirrorAuthErrors(t *testing.T) {
	reg := testutil.NewFaultyRegistry(t)
	im := newFaultImages(t, reg.Host)
	for _, tc := range []struct {
		name     string
		status   int
		ref      string
		want     string
		sentinel error
	}{
		{"401", http.StatusUnauthorized, im.ref, im.ref + ": authentication required (401 Unauthorized): log in with 'podman login " + reg.Host + "' or pass --authfile (auth files are read where podman reads them: $REGISTRY_AUTH_FILE, ${XDG_RUNTIME_DIR}/containers/auth.json, ~/.config/containers/auth.json, ~/.docker/config.json)", registryclient.ErrUnauthorized},
		{"403", http.StatusForbidden, im.ref, im.ref + ": access denied (403 Forbidden): the credentials for " + reg.Host + " may not read this repository", registryclient.ErrDenied},
		{"404", 0, reg.Host + "/app/target@sha256:" + strings.Repeat("0", 64), reg.Host + "/app/target@sha256:" + strings.Repeat("0", 64) + ": not found in the registry (404 Not Found): check the reference in the release file", registryclient.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
				if tc.status != 0 && strings.Contains(r.URL.Path, "/manifests/") {
					w.WriteHeader(tc.status)
					return true
				}
				return false
			})
			_, err := airgap.Mirror(ctx, []string{tc.ref}, airgap.OCI(t.TempDir()), fastOpts())
			if err == nil || err.Error() != tc.want || !errors.Is(err, tc.sentinel) {
				t.Fatalf("Mirror() = %v\nwant %q", err, tc.want)
			}
		})
	}
}

// TestMirrorResume interrupts a mirror while the target blob is being
// fetched, plants what a SIGKILL would leave (a partial temporary file, a
// truncated blob under its final name), and checks the rerun fetches only
// what is missing or damaged.
func TestMirrorResume(t *testing.T) {
	reg := testutil.NewFaultyRegistry(t)
	im := newFaultImages(t, reg.Host)
	refs := append([]string{im.ref}, im.others...)
	dir := t.TempDir()

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reg.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
		if strings.HasSuffix(r.URL.Path, im.layer.Desc.Digest.String()) && r.Method == http.MethodGet {
			cancel() // the run is stopped while this blob downloads
			<-r.Context().Done()
			return true
		}
		return false
	})
	o := fastOpts()
	o.Registry.Jobs = 1 // largest first: the target (300 KiB) is the first blob
	if _, err := airgap.Mirror(cctx, refs, airgap.OCI(dir), o); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted Mirror() = %v, want context.Canceled", err)
	}
	blobs := filepath.Join(dir, "blobs", "sha256")
	partial := filepath.Join(blobs, "."+im.layer.Desc.Digest.Hex+".partial-4242")
	if err := os.WriteFile(partial, im.layer.Data[:1000], 0o644); err != nil {
		t.Fatal(err)
	}
	base := testutil.NewLayer(100, 200<<10)
	if err := os.WriteFile(filepath.Join(blobs, base.Desc.Digest.Hex), base.Data[:base.Desc.Size/2], 0o644); err != nil {
		t.Fatal(err)
	}
	// An intact blob from the first run would be kept: stand one in by hand.
	other := testutil.NewLayer(110, 50<<10)
	if err := os.WriteFile(filepath.Join(blobs, other.Desc.Digest.Hex), other.Data, 0o644); err != nil {
		t.Fatal(err)
	}

	reg.SetFault(nil)
	sum, err := airgap.Mirror(ctx, refs, airgap.OCI(dir), fastOpts())
	if err != nil {
		t.Fatalf("resumed Mirror() = %v", err)
	}
	gets := reg.BlobGets()
	if gets[other.Desc.Digest.Hex] != 0 {
		t.Errorf("the intact blob was fetched again (%d GETs)", gets[other.Desc.Digest.Hex])
	}
	for _, d := range []v1.Hash{im.layer.Desc.Digest, base.Desc.Digest} {
		if gets[d.Hex] != 1 {
			t.Errorf("blob %s: %d GETs, want 1 (missing or damaged)", d, gets[d.Hex])
		}
	}
	if sum.Skipped != other.Desc.Size {
		t.Errorf("resumed Mirror() skipped %d bytes, want %d (the intact blob)", sum.Skipped, other.Desc.Size)
	}
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Errorf("the partial file of the killed run is still there: %v", err)
	}
	if got := mustRead(t, filepath.Join(blobs, base.Desc.Digest.Hex)); len(got) != int(base.Desc.Size) {
		t.Errorf("the truncated blob was kept: %d bytes, want %d", len(got), base.Desc.Size)
	}
	if sum.Images != 3 {
		t.Errorf("resumed Mirror() = %d images, want 3", sum.Images)
	}
}

// TestMirrorNoPlatform mirrors an arm64-only index for x86_64.
func TestMirrorNoPlatform(t *testing.T) {
	reg := testutil.NewFaultyRegistry(t)
	p := &testutil.Pusher{Host: reg.Host}
	ref, _, err := p.PushIndex("app/armonly", []string{"arm64"}, map[string][]testutil.Layer{"arm64": {testutil.NewLayer(7, 1000)}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = airgap.Mirror(ctx, []string{ref}, airgap.OCI(t.TempDir()), fastOpts())
	want := ref + ": no manifest for the platform linux/amd64 (x86_64) in the index (it has linux/arm64)"
	if err == nil || err.Error() != want || !errors.Is(err, airgap.ErrNoPlatform) {
		t.Fatalf("Mirror() = %v\nwant %q", err, want)
	}
}

func fastOpts() airgap.Options {
	o := opts(releases.X86_64, nil)
	o.Registry.Retries = 3
	return o
}

func itoa(n int) string { return strconv.Itoa(n) }
