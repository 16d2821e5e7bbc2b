package serve_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/airgap/serve"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

// fixture is a small release in an in-process source registry, mirrored
// into a layout: a two-arch index, a single image sharing its base layer,
// and an image by tag.
type fixture struct {
	srcHost string
	// refs are the references, as the layout names them.
	index, single, tagged string
	refs                  []string
	// amd64Child is the index's amd64 manifest.
	amd64Child string
	// layer is a layer of the single image only.
	layer v1.Hash
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	src := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(src.Close)
	host := strings.TrimPrefix(src.URL, "http://")
	p := &testutil.Pusher{Host: host}
	base := testutil.NewLayer(1, 64<<10)
	own := testutil.NewLayer(3, 20<<10)
	f := &fixture{srcHost: host, layer: own.Desc.Digest}
	var err error
	var children map[string]string
	f.index, children, err = p.PushIndex("openshift-release-dev/ocp-v4.0-art-dev", []string{"amd64", "arm64"},
		map[string][]testutil.Layer{"amd64": {base, testutil.NewLayer(2, 16<<10)}, "arm64": {testutil.NewLayer(4, 16<<10)}})
	if err != nil {
		t.Fatal(err)
	}
	f.amd64Child = children["amd64"]
	if f.single, err = p.PushImage("lvms4/topolvm-rhel9", "amd64", []testutil.Layer{base, own}); err != nil {
		t.Fatal(err)
	}
	cfg, m := testutil.Image("amd64", []testutil.Layer{base})
	if err := p.Blob("ubi9/toolbox", cfg.Data, cfg.Type); err != nil {
		t.Fatal(err)
	}
	if err := p.Blob("ubi9/toolbox", base.Data, base.Desc.MediaType); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Manifest("ubi9/toolbox", m, "9.4"); err != nil {
		t.Fatal(err)
	}
	f.tagged = host + "/ubi9/toolbox:9.4"
	f.refs = []string{f.index, f.single, f.tagged}
	return f
}

// mirror writes the fixture's images to a layout or archive, as mirror
// --to does.
func (f *fixture) mirror(t *testing.T, to string, arch releases.Arch) airgap.Target {
	t.Helper()
	target, err := airgap.ParseDestination(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := airgap.Mirror(context.Background(), f.refs, target, airgap.Options{Registry: registryclient.Options{Jobs: 4, Retries: 2}, Arch: arch}); err != nil {
		t.Fatal(err)
	}
	src, err := airgap.ParseSource(to)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// served maps a source reference to where serve offers it.
func served(host, prefix, ref string) string {
	_, rest, _ := strings.Cut(ref, "/")
	if prefix != "" {
		rest = prefix + "/" + rest
	}
	return host + "/" + rest
}

// running is a Serve started for a test, stopped at cleanup.
type running struct {
	*serve.Served
	stop context.CancelFunc
	done chan error
}

func start(t *testing.T, from airgap.Target, opts serve.Options) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *serve.Served, 1)
	opts.Ready = func(s *serve.Served) { ready <- s }
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.LogLevel == "" {
		opts.LogLevel = "warn"
	}
	r := &running{stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- serve.Serve(ctx, from, opts) }()
	select {
	case r.Served = <-ready:
	case err := <-r.done:
		cancel()
		t.Fatalf("Serve(%s) = %v before it was ready", from, err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatalf("Serve(%s) was not ready in 60s", from)
	}
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// Stopping: Serve returns nil once its context is done, and the port is
// closed.
func (r *running) shutdown(t *testing.T) {
	t.Helper()
	r.stop()
	select {
	case err := <-r.done:
		r.done <- err
		if err != nil {
			t.Errorf("Serve() after the context was cancelled = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve() did not return within 10s of the context being cancelled")
	}
	if c, err := net.DialTimeout("tcp", r.Host, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Serve returned", r.Host)
	}
}

// A layout and an archive are served as a registry: every image by digest
// at the path mirror --to docker:// would push it to, the tag by tag, every
// blob verified by a client reading it whole; a push and a delete are
// refused and the layout is untouched; stopping returns nil.
func TestServeLayoutAndArchive(t *testing.T) {
	f := newFixture(t)
	work := t.TempDir()
	for _, tc := range []struct {
		name, to string
		arch     releases.Arch
		prefix   string
	}{
		// oci: keeps the amd64 platform of the index only.
		{"layout", "oci:" + filepath.Join(work, "layout"), releases.X86_64, ""},
		{"archive", "oci-archive:" + filepath.Join(work, "images.tar"), "", "microshift"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from := f.mirror(t, tc.to, tc.arch)
			before := snapshot(t, from.Path)
			r := start(t, from, serve.Options{Prefix: tc.prefix})
			if r.Missing != 0 || len(r.Images) != 3 {
				t.Errorf("Served = %d images, %d blobs missing; want 3 and 0", len(r.Images), r.Missing)
			}
			for _, ref := range f.refs {
				want := served(r.Host, tc.prefix, ref)
				d, err := name.ParseReference(want, name.Insecure)
				if err != nil {
					t.Fatal(err)
				}
				desc, err := remote.Get(d)
				if err != nil {
					t.Fatalf("GET %s: %v", want, err)
				}
				if dd, ok := d.(name.Digest); ok && desc.Digest.String() != dd.DigestStr() {
					t.Errorf("GET %s: digest %s", want, desc.Digest)
				}
				img, err := desc.Image() // an index: the amd64 image
				if err != nil {
					t.Fatalf("reading %s: %v", want, err)
				}
				if err := validate.Image(img); err != nil {
					t.Errorf("validate %s: %v", want, err)
				}
			}
			repo, _ := name.NewRepository(served(r.Host, tc.prefix, f.srcHost+"/ubi9/toolbox"), name.Insecure)
			if tags, err := remote.List(repo); err != nil || !slices.Equal(tags, []string{"9.4"}) {
				t.Errorf("tags of %s = %v, %v; want [9.4]", repo, tags, err)
			}

			// Read-only: a push and a manifest delete are refused (405).
			img, _ := random.Image(1024, 1)
			pushTo, _ := name.ParseReference(served(r.Host, tc.prefix, f.srcHost+"/ubi9/toolbox:pushed"), name.Insecure)
			if err := remote.Write(pushTo, img); statusOf(err) != http.StatusMethodNotAllowed {
				t.Errorf("pushing to serve: %v; want 405", err)
			}
			del, _ := name.ParseReference(served(r.Host, tc.prefix, f.single), name.Insecure)
			if err := remote.Delete(del); statusOf(err) != http.StatusMethodNotAllowed {
				t.Errorf("deleting from serve: %v; want 405", err)
			}
			r.shutdown(t)
			if after := snapshot(t, from.Path); after != before {
				t.Errorf("serving changed %s:\nbefore %s\nafter  %s", from.Path, before, after)
			}
		})
	}
}

// A layout that lacks a blob (a differential bundle: its base holds it)
// is served; that blob is 404 BLOB_UNKNOWN, everything else is there.
func TestServeMissingBlob(t *testing.T) {
	f := newFixture(t)
	from := f.mirror(t, "oci:"+filepath.Join(t.TempDir(), "layout"), releases.X86_64)
	if err := os.Remove(filepath.Join(from.Path, "blobs", "sha256", f.layer.Hex)); err != nil {
		t.Fatal(err)
	}
	r := start(t, from, serve.Options{})
	if r.Missing != 1 {
		t.Errorf("Served.Missing = %d, want 1", r.Missing)
	}
	repo := served(r.Host, "", f.srcHost+"/lvms4/topolvm-rhel9")
	_, repoPath, _ := strings.Cut(repo, "/")
	resp := get(t, "http://"+r.Host+"/v2/"+repoPath+"/blobs/"+f.layer.String())
	var body struct{ Errors []struct{ Code string } }
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || len(body.Errors) != 1 || body.Errors[0].Code != "BLOB_UNKNOWN" {
		t.Errorf("GET the missing blob: %d %+v, want 404 BLOB_UNKNOWN", resp.StatusCode, body)
	}
	// The manifest that needs it is served; its other blobs too.
	d, _ := name.NewDigest(served(r.Host, "", f.single), name.Insecure)
	img, err := remote.Image(d)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	for _, l := range layers {
		ld, _ := l.Digest()
		rc, err := l.Compressed()
		if err == nil {
			_, err = io.Copy(io.Discard, rc)
			rc.Close()
		}
		if (ld == f.layer) != (err != nil) {
			t.Errorf("reading layer %s: %v", ld, err)
		}
	}
	// The other images pull whole.
	d, _ = name.NewDigest(served(r.Host, "", f.index), name.Insecure)
	idx, err := remote.Index(d)
	if err != nil {
		t.Fatal(err)
	}
	child, err := idx.Image(mustHash(t, f.amd64Child))
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(child); err != nil {
		t.Errorf("validate the index's amd64 image: %v", err)
	}
}

// TLS from a test CA and htpasswd, as the registry library configures
// them; podman and skopeo pull through them, as a device would.
func TestServeTLSAndHtpasswd(t *testing.T) {
	podman := testutil.NeedTool(t, "podman", "podman")
	skopeo := testutil.NeedTool(t, "skopeo", "skopeo")
	htpasswdBin := testutil.NeedTool(t, "htpasswd", "apache2-utils")
	f := newFixture(t)
	work := t.TempDir()
	from := f.mirror(t, "oci-archive:"+filepath.Join(work, "images.tar"), "")
	ca := testutil.NewCA(t)
	cert, key := ca.WriteServerFiles(t, work)
	hp, err := exec.Command(htpasswdBin, "-Bbn", "edge", "edge-pass").Output()
	if err != nil {
		t.Fatal(err)
	}
	htpasswd := filepath.Join(work, "htpasswd")
	if err := os.WriteFile(htpasswd, hp, 0o600); err != nil {
		t.Fatal(err)
	}
	r := start(t, from, serve.Options{TLSCert: cert, TLSKey: key, Htpasswd: htpasswd, Prefix: "microshift"})
	if !strings.HasPrefix(r.URL, "https://") {
		t.Errorf("URL = %s, want https", r.URL)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	for _, tc := range []struct {
		user, pass string
		want       int
	}{{"", "", http.StatusUnauthorized}, {"edge", "wrong", http.StatusUnauthorized}, {"edge", "edge-pass", http.StatusOK}} {
		req, _ := http.NewRequest(http.MethodGet, r.URL+"/v2/", nil)
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET /v2/ as %q: %d, want %d", tc.user, resp.StatusCode, tc.want)
		}
	}
	// Plain HTTP on the TLS port is refused.
	if resp, err := http.Get("http://" + r.Host + "/v2/"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP answered 200")
		}
	}

	certDir := filepath.Join(work, "certs.d")
	ca.WriteCertsD(t, certDir, r.Host)
	certDir = filepath.Join(certDir, r.Host)
	env := append(os.Environ(), "HOME="+work, "XDG_RUNTIME_DIR="+work)
	run := func(bin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// podman refuses a --runroot longer than 50 characters.
	store, err := os.MkdirTemp("", "serve-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(store)
	for _, ref := range []string{f.index, f.single} {
		pull := served(r.Host, "microshift", ref)
		out := run(podman, "--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"), "--storage-driver", "vfs",
			"pull", "--cert-dir", certDir, "--creds", "edge:edge-pass", pull)
		t.Logf("podman pull %s:\n%s", pull, out)
		raw := run(skopeo, "inspect", "--raw", "--cert-dir", certDir, "--creds", "edge:edge-pass", "docker://"+pull)
		if !strings.HasSuffix(ref, "@sha256:"+sha256Hex([]byte(raw))) {
			t.Errorf("skopeo inspect --raw %s: the manifest does not have the reference's digest", pull)
		}
	}
	dst := filepath.Join(work, "copied")
	run(skopeo, "copy", "--src-cert-dir", certDir, "--src-creds", "edge:edge-pass", "docker://"+served(r.Host, "microshift", f.tagged), "oci:"+dst+":toolbox")
	// Without credentials, skopeo is refused.
	cmd := exec.Command(skopeo, "inspect", "--cert-dir", certDir, "docker://"+served(r.Host, "microshift", f.single))
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("skopeo inspect without credentials succeeded:\n%s", out)
	}
	// A push with valid credentials is still refused: read-only.
	pushCmd := exec.Command(skopeo, "copy", "--dest-cert-dir", certDir, "--dest-creds", "edge:edge-pass", "oci:"+dst+":toolbox", "docker://"+r.Host+"/microshift/pushed:1")
	pushCmd.Env = env
	if out, err := pushCmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "405") && !strings.Contains(strings.ToLower(string(out)), "unsupported") {
		t.Errorf("skopeo copy to serve: %v\n%s; want refused", err, out)
	}
}

// Bad input is one line naming what is wrong, before anything listens.
func TestServeErrors(t *testing.T) {
	f := newFixture(t)
	work := t.TempDir()
	from := f.mirror(t, "oci:"+filepath.Join(work, "layout"), releases.X86_64)
	ca := testutil.NewCA(t)
	cert, key := ca.WriteServerFiles(t, work)
	write := func(name, data string) string {
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbage := write("garbage.crt", "not a certificate\n")
	md5 := write("htpasswd-md5", "edge:$apr1$abcdefgh$0123456789abcdefghijkl\n")
	noColon := write("htpasswd-bad", "# users\nedge\n")
	notLayout := filepath.Join(work, "not-a-layout")
	os.MkdirAll(notLayout, 0o755)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()

	for _, tc := range []struct {
		name string
		from airgap.Target
		opts serve.Options
		want string
	}{
		{"not a layout", airgap.OCI(notLayout), serve.Options{}, "oci:" + notLayout + ": not an OCI image layout (no oci-layout in it)"},
		{"no such layout", airgap.OCI(filepath.Join(work, "nope")), serve.Options{}, "opening oci:" + filepath.Join(work, "nope") + ": no such file or directory"},
		{"port in use", from, serve.Options{Listen: busy.Addr().String()}, "listening on " + busy.Addr().String() + ": address already in use"},
		{"bad listen", from, serve.Options{Listen: "5000"}, `listen address "5000": want HOST:PORT, as in 127.0.0.1:5000 (address 5000: missing port in address)`},
		{"bad port", from, serve.Options{Listen: "127.0.0.1:99999"}, `listen address "127.0.0.1:99999": port "99999" is not a number from 0 to 65535`},
		{"cert does not parse", from, serve.Options{TLSCert: garbage, TLSKey: key}, "loading the TLS certificate " + garbage + " and key " + key + ": tls: failed to find any PEM data in certificate input"},
		{"key does not match", from, serve.Options{TLSCert: cert, TLSKey: garbage}, "loading the TLS certificate " + cert + " and key " + garbage + ": tls: failed to find any PEM data in key input"},
		{"no key", from, serve.Options{TLSCert: cert}, "a TLS certificate without a key: give both"},
		{"no cert file", from, serve.Options{TLSCert: filepath.Join(work, "none.crt"), TLSKey: key}, "reading " + filepath.Join(work, "none.crt") + ": no such file or directory"},
		{"htpasswd missing", from, serve.Options{Htpasswd: filepath.Join(work, "none")}, "reading the htpasswd file " + filepath.Join(work, "none") + ": no such file or directory"},
		{"htpasswd not bcrypt", from, serve.Options{Htpasswd: md5}, md5 + `:1: user "edge": the hash is not bcrypt, the only kind the registry accepts (make it with htpasswd -B)`},
		{"htpasswd no colon", from, serve.Options{Htpasswd: noColon}, noColon + ":2: not USER:HASH"},
		{"bad prefix", from, serve.Options{Prefix: "Upper/Case"}, `prefix "Upper/Case": repository can only contain the characters`},
		{"bad log level", from, serve.Options{LogLevel: "loud"}, `log level "loud": want error, warn, info or debug`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opts.Listen == "" {
				tc.opts.Listen = "127.0.0.1:0"
			}
			called := false
			tc.opts.Ready = func(*serve.Served) { called = true }
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := serve.Serve(ctx, tc.from, tc.opts)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Serve() = %v\nwant one line starting %q", err, tc.want)
			}
			if called {
				t.Errorf("Serve() was ready despite %s", tc.name)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(work, "none")); err == nil {
		t.Errorf("a missing htpasswd file was created")
	}
}

// Two images that would be served under one repository and tag with
// different digests are refused, naming both.
func TestServeTagConflict(t *testing.T) {
	f := newFixture(t)
	other := newFixture(t) // another source registry, same paths
	p := &testutil.Pusher{Host: other.srcHost}
	cfg, m := testutil.Image("amd64", []testutil.Layer{testutil.NewLayer(9, 1024)})
	p.Blob("ubi9/toolbox", cfg.Data, cfg.Type)
	p.Blob("ubi9/toolbox", testutil.NewLayer(9, 1024).Data, testutil.NewLayer(9, 1024).Desc.MediaType)
	if _, err := p.Manifest("ubi9/toolbox", m, "9.4"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "layout")
	f.mirror(t, "oci:"+dir, releases.X86_64)
	other.refs = []string{other.tagged}
	from := other.mirror(t, "oci:"+dir, releases.X86_64)
	err := serve.Serve(context.Background(), from, serve.Options{Listen: "127.0.0.1:0"})
	want := fmt.Sprintf("%s and %s would both be served as ubi9/toolbox:9.4 with different digests", f.tagged, other.tagged)
	if f.tagged > other.tagged {
		want = fmt.Sprintf("%s and %s would both be served as ubi9/toolbox:9.4 with different digests", other.tagged, f.tagged)
	}
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Serve() = %v, want %q", err, want)
	}
}

func statusOf(err error) int {
	var te *transport.Error
	if errors.As(err, &te) {
		return te.StatusCode
	}
	return 0
}

func get(t *testing.T, url string) *http.Response {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func mustHash(t *testing.T, ref string) v1.Hash {
	t.Helper()
	_, d, _ := strings.Cut(ref, "@")
	h, err := v1.NewHash(d)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// snapshot lists a layout's or archive's files with sizes and times.
func snapshot(t *testing.T, p string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(p, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %d;", path, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	return b.String()
}

func sha256Hex(data []byte) string {
	h, _, _ := v1.SHA256(strings.NewReader(string(data)))
	return h.Hex
}
