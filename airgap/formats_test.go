package airgap_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

// dockerFixture pushes images with Docker media types, as OpenShift's are:
// two single-arch images and a manifest list, sharing a base layer, and
// one OCI image.
func dockerFixture(t *testing.T, host string) map[string]string {
	t.Helper()
	p := &testutil.Pusher{Host: host}
	base := testutil.NewLayer(201, 96<<10)
	refs := map[string]string{}
	var err error
	if refs["router"], err = p.PushDockerImage("ocp/release", "amd64", []testutil.Layer{base, testutil.NewLayer(202, 20<<10)}); err != nil {
		t.Fatal(err)
	}
	if refs["dns"], err = p.PushDockerImage("ocp/dns", "amd64", []testutil.Layer{base, testutil.NewLayer(203, 24<<10)}); err != nil {
		t.Fatal(err)
	}
	if refs["cli"], _, err = p.PushDockerIndex("ocp/cli", []string{"amd64", "arm64"}, map[string][]testutil.Layer{
		"amd64": {base, testutil.NewLayer(204, 8<<10)}, "arm64": {testutil.NewLayer(205, 30<<10)},
	}); err != nil {
		t.Fatal(err)
	}
	if refs["oci"], err = p.PushImage("lvms/operator", "amd64", []testutil.Layer{base, testutil.NewLayer(206, 12<<10)}); err != nil {
		t.Fatal(err)
	}
	return refs
}

func values(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// TestMirrorToDir writes dir:DIR and reads every image back with the
// installed skopeo (Debian's 1.9.3, the oldest available: containers/image
// 5.23, which cannot read Docker-typed manifests from an OCI layout).
func TestMirrorToDir(t *testing.T) {
	reg := testutil.StartRegistry(t)
	refs := dockerFixture(t, reg.Host)
	dir := filepath.Join(t.TempDir(), "images")
	to, err := airgap.ParseDestination("dir:" + dir)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := airgap.Mirror(ctx, values(refs), to, opts(releases.X86_64, nil))
	if err != nil {
		t.Fatalf("Mirror() = %v", err)
	}
	if sum.Images != 4 {
		t.Errorf("Mirror() = %+v, want 4 images", sum)
	}
	var list []string
	for n, ref := range refs {
		view := filepath.Join(dir, airgap.DirName(ref))
		list = append(list, ref+","+airgap.DirName(ref))
		var info struct{ Architecture, Digest string }
		if err := json.Unmarshal(skopeo(t, "inspect", "dir:"+view), &info); err != nil {
			t.Fatalf("skopeo inspect dir: of %s: %v", n, err)
		}
		if info.Architecture != "amd64" {
			t.Errorf("skopeo inspect dir: of %s = %+v, want amd64", n, info)
		}
		// The manifest the reference names, byte for byte.
		raw := skopeo(t, "inspect", "--raw", "dir:"+view)
		if d := "sha256:" + sha256Hex(raw); !strings.HasSuffix(ref, "@"+d) {
			t.Errorf("%s: dir: manifest has digest %s, the reference says %s", n, d, ref)
		}
		// skopeo reads every blob of it (the amd64 instance of the list).
		skopeo(t, "copy", "--quiet", "dir:"+view, "dir:"+filepath.Join(t.TempDir(), n))
	}
	// Blobs are hard links into the layout: stored once.
	base := testutil.NewLayer(201, 96<<10)
	shared, err := os.Stat(filepath.Join(dir, "blobs", "sha256", base.Desc.Digest.Hex))
	if err != nil {
		t.Fatal(err)
	}
	for n, ref := range refs {
		st, err := os.Stat(filepath.Join(dir, airgap.DirName(ref), base.Desc.Digest.Hex))
		if err != nil || !os.SameFile(st, shared) {
			t.Errorf("%s: the shared base layer is not a hard link to the layout's blob: %v", n, err)
		}
	}
	sort.Strings(list)
	if got := string(mustRead(t, filepath.Join(dir, airgap.DirListFile))); got != strings.Join(list, "\n")+"\n" {
		t.Errorf("%s = %q, want %q", airgap.DirListFile, got, list)
	}
	// It is an OCI layout too.
	if idx := readIndex(t, dir); len(idx.Manifests) != 4 {
		t.Errorf("index.json has %d entries, want 4", len(idx.Manifests))
	}
	// A rerun fetches nothing and leaves no temporary directory.
	sum, err = airgap.Mirror(ctx, values(refs), to, opts(releases.X86_64, nil))
	if err != nil || sum.Fetched != 0 {
		t.Errorf("rerun = %+v, %v; want nothing fetched", sum, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left %s behind", e.Name())
		}
	}
}

// TestMirrorArchive mirrors into oci-archive: twice (byte-identical
// archives), reads it with skopeo, and loads it into an empty registry
// with --from, where shared blobs are uploaded once and mounted.
func TestMirrorArchive(t *testing.T) {
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	work := t.TempDir()
	archive := func(name string) airgap.Target {
		to, err := airgap.ParseDestination("oci-archive:" + filepath.Join(work, name))
		if err != nil {
			t.Fatal(err)
		}
		return to
	}
	a := archive("a.tar")
	sum, err := airgap.Mirror(ctx, f.refs, a, opts(releases.X86_64, nil))
	if err != nil {
		t.Fatalf("Mirror() to an archive = %v", err)
	}
	// An archive is for a registry: indexes whole.
	if sum.Images != 4 || sum.Blobs != len(f.all) {
		t.Errorf("Mirror() = %+v, want 4 images and every platform's %d blobs", sum, len(f.all))
	}
	if _, err := os.Stat(filepath.Join(work, ".a.tar.partial")); !os.IsNotExist(err) {
		t.Errorf("the staging layout is still there: %v", err)
	}
	first := mustRead(t, a.Path)
	if _, err := airgap.Mirror(ctx, f.refs, archive("b.tar"), opts(releases.X86_64, nil)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, mustRead(t, filepath.Join(work, "b.tar"))) {
		t.Errorf("two archives of the same images differ")
	}
	// A rerun into the existing archive keeps it byte for byte.
	sum, err = airgap.Mirror(ctx, f.refs, a, opts(releases.X86_64, nil))
	if err != nil || sum.Fetched != 0 {
		t.Fatalf("rerun = %+v, %v; want nothing fetched", sum, err)
	}
	if !bytes.Equal(first, mustRead(t, a.Path)) {
		t.Errorf("the rerun changed the archive")
	}
	for n, ref := range f.byName {
		var info struct{ Digest string }
		if err := json.Unmarshal(skopeo(t, "inspect", "oci-archive:"+a.Path+":"+ref), &info); err != nil {
			t.Fatalf("skopeo inspect oci-archive: %s: %v", n, err)
		}
		if !strings.HasSuffix(ref, "@"+info.Digest) {
			t.Errorf("%s: skopeo sees digest %s", n, info.Digest)
		}
	}
	images, err := airgap.LayoutImages(a, registryclient.Options{})
	if err != nil || strings.Join(images, " ") != strings.Join(f.refs, " ") {
		t.Errorf("LayoutImages() = %v, %v; want %v", images, err, f.refs)
	}
	// oci:FILE names the archive too.
	if again, err := airgap.LayoutImages(airgap.OCI(a.Path), registryclient.Options{}); err != nil || len(again) != 4 {
		t.Errorf("LayoutImages(oci:FILE) = %v, %v", again, err)
	}

	// The disconnected side: the archive into an empty registry.
	dst := testutil.StartRegistry(t)
	to, err := airgap.ParseDestination("docker://" + dst.Host + "/mirror")
	if err != nil {
		t.Fatal(err)
	}
	o := opts("", nil)
	o.From = a
	sum, err = airgap.Mirror(ctx, images, to, o)
	if err != nil {
		t.Fatalf("Mirror() from the archive = %v", err)
	}
	if sum.Images != 4 || sum.Uploads != len(f.all) || sum.Fetched != sum64(f.all) || sum.Mounts != 3 {
		t.Errorf("Mirror() from the archive = %+v; want %d uploads (%d bytes) and 3 mounts", sum, len(f.all), sum64(f.all))
	}
	for n, ref := range f.byName {
		src, _ := name.ParseReference(ref)
		d, err := remote.Get(mustRef(t, dst.Host+"/mirror/"+src.Context().RepositoryStr()+"@"+src.Identifier()))
		if err != nil || d.Digest.String() != src.Identifier() {
			t.Errorf("%s in the registry: %v, %v", n, d, err)
		}
	}
}

// TestMirrorFromSparseLayout: an oci: layout holds one platform of an
// index, which a registry cannot take; the other images still go.
func TestMirrorFromSparseLayout(t *testing.T) {
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	dir := filepath.Join(t.TempDir(), "images")
	if _, err := airgap.Mirror(ctx, f.refs, airgap.OCI(dir), opts(releases.X86_64, nil)); err != nil {
		t.Fatal(err)
	}
	dst := testutil.StartRegistry(t)
	to, _ := airgap.ParseDestination("docker://" + dst.Host)
	o := opts("", nil)
	o.From = airgap.OCI(dir)
	sum, err := airgap.Mirror(ctx, f.refs, to, o)
	if !errors.Is(err, airgap.ErrPartialIndex) || !strings.Contains(err.Error(), "--all-platforms") || !strings.Contains(err.Error(), "(and 1 more of 4 images failed)") {
		t.Fatalf("Mirror() of a sparse layout to a registry = %v", err)
	}
	if sum.Images != 2 {
		t.Errorf("Mirror() = %+v, want the 2 single-arch images", sum)
	}
	// Into another layout, it copies what is there.
	sum, err = airgap.Mirror(ctx, f.refs, airgap.OCI(filepath.Join(t.TempDir(), "copy")), o)
	if err != nil || sum.Images != 4 || sum.Blobs != len(f.amd64) {
		t.Errorf("Mirror() of a sparse layout to a layout = %+v, %v", sum, err)
	}
	// A plan image the layout does not have.
	missing := reg.Host + "/ocp/release@sha256:" + strings.Repeat("1", 64)
	_, err = airgap.Mirror(ctx, []string{missing}, airgap.OCI(filepath.Join(t.TempDir(), "x")), o)
	if !errors.Is(err, airgap.ErrNotInLayout) {
		t.Errorf("Mirror() of an image the layout lacks = %v", err)
	}
}

// TestArchiveResume fails one blob: no archive is written, the staging
// layout keeps what completed, and the rerun fetches only the rest.
func TestArchiveResume(t *testing.T) {
	reg := testutil.NewFaultyRegistry(t)
	im := newFaultImages(t, reg.Host)
	refs := append([]string{im.ref}, im.others...)
	file := filepath.Join(t.TempDir(), "bundle.tar")
	to, _ := airgap.ParseDestination("oci-archive:" + file)
	target := blobPath("app/target", im.layer.Desc.Digest)
	reg.SetFault(func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Path == target {
			w.WriteHeader(http.StatusNotFound)
			return true
		}
		return false
	})
	_, err := airgap.Mirror(ctx, refs, to, fastOpts())
	if err == nil || !strings.Contains(err.Error(), "run mirror again to resume") {
		t.Fatalf("Mirror() with a missing blob = %v", err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("a failed mirror wrote the archive: %v", err)
	}
	reg.SetFault(nil)
	sum, err := airgap.Mirror(ctx, refs, to, fastOpts())
	if err != nil {
		t.Fatalf("resumed Mirror() = %v", err)
	}
	if gets := reg.BlobGets(); len(gets) != 1 || gets[im.layer.Desc.Digest.Hex] != 1 {
		t.Errorf("resumed Mirror() fetched %v, want only the failed blob", gets)
	}
	if sum.Images != 3 {
		t.Errorf("resumed Mirror() = %+v", sum)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("no archive after the resumed run: %v", err)
	}
}

// TestMirrorThroughRegistriesConf reads images whose registry is down from
// the mirror registries.conf lists for it, as podman would.
func TestMirrorThroughRegistriesConf(t *testing.T) {
	mirror := testutil.NewFaultyRegistry(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	l.Close() // nothing listens there now
	p := &testutil.Pusher{Host: mirror.Host}
	ref, err := p.PushImage("cache/org/app", "amd64", []testutil.Layer{testutil.NewLayer(301, 10<<10)})
	if err != nil {
		t.Fatal(err)
	}
	planRef := down + "/org/app" + ref[strings.Index(ref, "@"):]
	conf := filepath.Join(t.TempDir(), "registries.conf")
	os.WriteFile(conf, []byte(`[[registry]]
location = "`+down+`"
[[registry.mirror]]
location = "`+mirror.Host+`/cache"
insecure = true
`), 0o644)
	o := fastOpts()
	o.Registry.RegistriesConf = conf
	if o.Registry, err = o.Registry.Prepare(); err != nil {
		t.Fatal(err)
	}
	mirror.SetFault(nil)
	sum, err := airgap.Mirror(ctx, []string{planRef}, airgap.OCI(t.TempDir()), o)
	if err != nil || sum.Images != 1 {
		t.Fatalf("Mirror() through the registries.conf mirror = %+v, %v", sum, err)
	}
	if n := mirror.Requests("GET", "/v2/cache/org/app/manifests/"+ref[strings.Index(ref, "@")+1:]); n != 1 {
		t.Errorf("the mirror served the manifest %d times, want 1", n)
	}
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// TestMirrorFromHostileLayout: a --from layout whose blob is a named pipe
// or a symlink out of the layout, and a named pipe as an archive, are
// refused at once naming the blob or file; nothing blocks, nothing outside
// the layout is read.
func TestMirrorFromHostileLayout(t *testing.T) {
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	src := filepath.Join(t.TempDir(), "images")
	if _, err := airgap.Mirror(ctx, f.refs, airgap.OCI(src), opts(releases.X86_64, nil)); err != nil {
		t.Fatal(err)
	}
	// The first layer blob of the layout.
	blobs, err := filepath.Glob(filepath.Join(src, "blobs", "sha256", "*"))
	if err != nil || len(blobs) == 0 {
		t.Fatalf("no blobs in the layout: %v", err)
	}
	var layer string
	for _, b := range blobs {
		if st, _ := os.Stat(b); st.Size() > 4096 {
			layer = b
			break
		}
	}
	if layer == "" {
		t.Fatal("no layer blob in the layout")
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("planted-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, blob string)
	}{
		{"named pipe blob", func(t *testing.T, blob string) {
			if err := syscall.Mkfifo(blob, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"blob symlinked outside the layout", func(t *testing.T, blob string) {
			if err := os.Symlink(secret, blob); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "images")
			if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			blob := filepath.Join(dir, "blobs", "sha256", filepath.Base(layer))
			if err := os.Remove(blob); err != nil {
				t.Fatal(err)
			}
			tc.plant(t, blob)
			o := opts("", nil)
			o.From = airgap.OCI(dir)
			out := filepath.Join(t.TempDir(), "copy")
			done := make(chan error, 1)
			go func() {
				_, err := airgap.Mirror(ctx, f.refs, airgap.OCI(out), o)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), filepath.Base(layer)) {
					t.Fatalf("Mirror() from a layout with a %s = %v, want an error naming the blob", tc.name, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("Mirror() from a layout with a %s blocks", tc.name)
			}
			_ = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					if data, _ := os.ReadFile(p); bytes.Contains(data, []byte("planted-secret")) {
						t.Errorf("%s holds the planted secret", p)
					}
				}
				return nil
			})
		})
	}
	t.Run("named pipe archive", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "images.tar")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		o := opts("", nil)
		o.From, err = airgap.ParseDestination("oci-archive:" + fifo)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := airgap.Mirror(ctx, f.refs, airgap.OCI(filepath.Join(t.TempDir(), "copy")), o)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Fatalf("Mirror() from a named pipe archive = %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Mirror() from a named pipe archive blocks")
		}
	})
}
