package airgap_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

// fixture is a small set of images in one registry: two multi-arch
// indexes and two single-arch images, sharing base layers.
type fixture struct {
	host string
	// refs are the references a plan would list, sorted.
	refs []string
	// byName maps a short name to its reference.
	byName map[string]string
	// amd64 and all are the blobs (config and layers) a mirror must store
	// for x86_64 and for every platform.
	amd64, all map[v1.Hash]int64
	// childAMD64 is the amd64 manifest digest of each index image.
	childAMD64 map[string]string
}

func newFixture(t *testing.T, host string) *fixture {
	t.Helper()
	f := &fixture{host: host, byName: map[string]string{}, amd64: map[v1.Hash]int64{}, all: map[v1.Hash]int64{}, childAMD64: map[string]string{}}
	p := &testutil.Pusher{Host: host}
	baseA := testutil.NewLayer(1, 64<<10)
	baseB := testutil.NewLayer(2, 48<<10)
	baseArm := testutil.NewLayer(3, 40<<10)
	layer := func(seed uint64) testutil.Layer { return testutil.NewLayer(seed, 16<<10+int64(seed)) }
	record := func(arch string, layers []testutil.Layer) {
		cfg, _ := testutil.Image(arch, layers)
		f.all[cfg.Digest()] = int64(len(cfg.Data))
		for _, l := range layers {
			f.all[l.Desc.Digest] = l.Desc.Size
		}
		if arch == "amd64" {
			f.amd64[cfg.Digest()] = int64(len(cfg.Data))
			for _, l := range layers {
				f.amd64[l.Desc.Digest] = l.Desc.Size
			}
		}
	}
	index := func(name, path string, amd, arm []testutil.Layer) {
		ref, children, err := p.PushIndex(path, []string{"amd64", "arm64"}, map[string][]testutil.Layer{"amd64": amd, "arm64": arm})
		if err != nil {
			t.Fatal(err)
		}
		record("amd64", amd)
		record("arm64", arm)
		f.byName[name] = ref
		f.childAMD64[name] = children["amd64"]
	}
	single := func(name, path string, layers []testutil.Layer) {
		ref, err := p.PushImage(path, "amd64", layers)
		if err != nil {
			t.Fatal(err)
		}
		record("amd64", layers)
		f.byName[name] = ref
	}
	index("cli", "ocp/release", []testutil.Layer{baseA, layer(10)}, []testutil.Layer{baseArm, layer(11)})
	index("lvms", "lvms/operator", []testutil.Layer{baseB, layer(12)}, []testutil.Layer{baseArm, layer(13)})
	single("router", "ocp/release", []testutil.Layer{baseA, layer(14)})
	single("dns", "ocp/dns", []testutil.Layer{baseA, baseB, layer(15)})
	for _, r := range f.byName {
		f.refs = append(f.refs, r)
	}
	sort.Strings(f.refs)
	return f
}

func sum(m map[v1.Hash]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// opts are mirror options for a test registry reached through tr (nil:
// directly), with fast retries.
func opts(arch releases.Arch, tr http.RoundTripper) airgap.Options {
	return airgap.Options{
		Registry: registryclient.Options{Jobs: 4, Retries: 3, Transport: tr},
		Arch:     arch,
	}
}

// blobFiles lists blobs/sha256 of a layout: name -> size.
func blobFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "blobs", "sha256"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = info.Size()
	}
	return out
}

// blobPath is the URL path of a blob in repository path.
func blobPath(repo string, d v1.Hash) string { return "/v2/" + repo + "/blobs/" + d.String() }

// dropAfter writes the response head and half of body, then closes the
// connection: a transfer cut mid-blob.
func dropHalf(w http.ResponseWriter, body []byte) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("no hijacker")
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	buf.Write(body[:len(body)/2])
	buf.Flush()
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
}

var ctx = context.Background()
