package rebase_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
)

// pushImage pushes a random single-arch image (linux/goarch in its config;
// goarch "" records none) and returns its digest reference.
func pushImage(t testing.TB, ref, goarch string) string {
	t.Helper()
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	if goarch != "" {
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = "linux", goarch
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			t.Fatal(err)
		}
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return r.Context().Name() + "@" + d.String()
}

// pushIndex pushes a multi-arch index of random images, one per goarch, and
// returns its digest reference and the platform manifests' digests.
func pushIndex(t testing.TB, ref string, goarches ...string) (string, map[string]string) {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	platforms := map[string]string{}
	for _, a := range goarches {
		img, err := random.Image(512, 1)
		if err != nil {
			t.Fatal(err)
		}
		img = mutate.MediaType(img, types.OCIManifestSchema1)
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		platforms[a] = d.String()
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: a}}})
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(r, idx); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return r.Context().Name() + "@" + d.String(), platforms
}

// deleteManifest deletes a manifest by digest, as a registry admin would.
func deleteManifest(t testing.TB, ref string) {
	t.Helper()
	d, err := name.NewDigest(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Delete(d); err != nil {
		t.Fatalf("deleting %s: %v", ref, err)
	}
}

func repoOf(ref string) string { return strings.SplitN(ref, "@", 2)[0] }

// writeRelease writes core release files with the given images (key=ref,
// in order) into dir.
func writeRelease(t testing.TB, dir string, files map[string][]string) {
	t.Helper()
	for n, images := range files {
		f := &releases.File{Name: n, Base: "4.19.0"}
		for _, kv := range images {
			k, v, _ := strings.Cut(kv, "=")
			f.Images = append(f.Images, releases.Image{Key: k, Ref: v})
		}
		if err := os.WriteFile(filepath.Join(dir, n), f.Encode(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResolveTagsRealRegistry resolves tags against a real docker-registry:
// per-arch manifests out of an index, the index itself with IndexDigest,
// single-arch images checked against the file's arch, and a tag moved
// between two runs.
func TestResolveTagsRealRegistry(t *testing.T) {
	reg := testutil.StartRegistry(t)
	h := reg.Host
	amd := pushImage(t, h+"/edge/agent:v1", "amd64")
	arm := pushImage(t, h+"/edge/agent-arm:v1", "arm64")
	multi, plat := pushIndex(t, h+"/edge/multi:v1", "amd64", "arm64")
	pinned := pushImage(t, h+"/edge/pinned:v1", "amd64")

	dir := t.TempDir()
	writeRelease(t, dir, map[string][]string{
		"release-x86_64.json":  {"agent=" + h + "/edge/agent:v1", "multi=" + h + "/edge/multi:v1", "pinned=" + pinned},
		"release-aarch64.json": {"agent=" + h + "/edge/agent-arm:v1", "multi=" + h + "/edge/multi:v1"},
	})
	resolve := func(t *testing.T, dir string, index bool) *rebase.Update {
		t.Helper()
		u, err := rebase.Prepare(context.Background(), dir, rebase.UpdateOptions{ResolveTags: true, IndexDigest: index, Registry: registryclient.Options{Jobs: 4}})
		if err != nil {
			t.Fatalf("Prepare(resolve tags) = %v", err)
		}
		if err := u.Write(); err != nil {
			t.Fatal(err)
		}
		return u
	}

	t.Run("platform digests", func(t *testing.T) {
		d := copyDir(t, dir)
		u := resolve(t, d, false)
		rel := loadRelease(t, d)
		for _, tc := range []struct {
			arch      releases.Arch
			key, want string
		}{
			{releases.X86_64, "agent", amd},
			{releases.X86_64, "multi", repoOf(multi) + "@" + plat["amd64"]},
			{releases.X86_64, "pinned", pinned},
			{releases.AArch64, "agent", arm},
			{releases.AArch64, "multi", repoOf(multi) + "@" + plat["arm64"]},
		} {
			if got, _ := rel.File("", tc.arch).Lookup(tc.key); got != tc.want {
				t.Errorf("%s %s = %s, want %s", tc.arch, tc.key, got, tc.want)
			}
		}
		for _, f := range u.Files {
			for _, c := range f.Changes {
				if c.Source != "registry" || !strings.HasSuffix(c.Tag, ":v1") || c.Old != c.Tag {
					t.Errorf("%s %s: change %+v, want a registry change from the tag", f.Name, c.Key, c)
				}
			}
		}
	})

	t.Run("index digests", func(t *testing.T) {
		d := copyDir(t, dir)
		resolve(t, d, true)
		rel := loadRelease(t, d)
		for _, a := range []releases.Arch{releases.X86_64, releases.AArch64} {
			if got, _ := rel.File("", a).Lookup("multi"); got != multi {
				t.Errorf("%s multi = %s, want the index %s", a, got, multi)
			}
		}
		// A single-arch image has no index: its manifest is pinned.
		if got, _ := rel.File("", releases.X86_64).Lookup("agent"); got != amd {
			t.Errorf("x86_64 agent = %s, want %s", got, amd)
		}
	})

	t.Run("tag moved between runs", func(t *testing.T) {
		first := copyDir(t, dir)
		resolve(t, first, false)
		moved := pushImage(t, h+"/edge/agent:v1", "amd64") // v1 now names another image
		second := copyDir(t, dir)
		resolve(t, second, false)
		a, _ := loadRelease(t, first).File("", releases.X86_64).Lookup("agent")
		b, _ := loadRelease(t, second).File("", releases.X86_64).Lookup("agent")
		if a != amd || b != moved || a == b {
			t.Errorf("agent resolved to %s, then %s; want %s, then %s", a, b, amd, moved)
		}
		// Both digests still exist: verify passes for both directories.
		for _, d := range []string{first, second} {
			checks, err := rebase.Verify(context.Background(), loadRelease(t, d).Files(), registryclient.Options{})
			if err != nil || rebase.Failed(checks) != 0 {
				t.Errorf("Verify(%s) = %d failed, %v: %+v", d, rebase.Failed(checks), err, checks)
			}
		}
	})

	// A catalog component's own release/ directory has no core file: it is
	// updated and verified all the same.
	t.Run("component release files", func(t *testing.T) {
		d := t.TempDir()
		writeRelease(t, d, map[string][]string{
			"release-edge-agent-x86_64.json":  {"agent=" + h + "/edge/agent:v1", "multi=" + h + "/edge/multi:v1"},
			"release-edge-agent-aarch64.json": {"agent=" + h + "/edge/agent-arm:v1", "multi=" + h + "/edge/multi:v1"},
		})
		u := resolve(t, d, false)
		if n := len(u.Changed()); n != 2 {
			t.Errorf("%d files changed, want 2", n)
		}
		files, label, err := rebase.LoadFiles(d)
		if err != nil || label != "component release files in "+d || len(files) != 2 {
			t.Fatalf("LoadFiles() = %d files, %q, %v", len(files), label, err)
		}
		checks, err := rebase.Verify(context.Background(), files, registryclient.Options{})
		if err != nil || rebase.Failed(checks) != 0 || len(checks) != 4 {
			t.Errorf("Verify(component files) = %d failed of %d, %v", rebase.Failed(checks), len(checks), err)
		}
	})

	for _, tc := range []struct {
		name  string
		files map[string][]string
		want  string
	}{
		{"missing tag", map[string][]string{"release-x86_64.json": {"agent=" + h + "/edge/agent:v9"}},
			`resolving tags: DIR/release-x86_64.json image "agent": ` + h + `/edge/agent:v9: tag not found (404): manifest unknown`},
		{"missing repository", map[string][]string{"release-x86_64.json": {"agent=" + h + "/edge/nothing:v1"}},
			`resolving tags: DIR/release-x86_64.json image "agent": ` + h + `/edge/nothing:v1: tag not found (404): manifest unknown`},
		{"single image of another arch", map[string][]string{"release-x86_64.json": {"agent=" + h + "/edge/agent-arm:v1"}},
			`resolving tags: DIR/release-x86_64.json image "agent": ` + h + `/edge/agent-arm:v1: image is linux/arm64, not linux/amd64`},
		{"index without the arch, and more", map[string][]string{"release-x86_64.json": {"a=" + h + "/edge/nothing:v1", "b=" + h + "/edge/nothing:v2"}},
			`resolving tags: DIR/release-x86_64.json image "a": ` + h + `/edge/nothing:v1: tag not found (404): manifest unknown (and 1 more)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			writeRelease(t, d, tc.files)
			before := snapshot(t, d)
			_, err := rebase.Prepare(context.Background(), d, rebase.UpdateOptions{ResolveTags: true})
			if want := strings.ReplaceAll(tc.want, "DIR", d); errString(err) != want {
				t.Errorf("Prepare() = %s\nwant        %s", errString(err), want)
			}
			if diff := sameSnapshot(before, snapshot(t, d)); diff != "" {
				t.Errorf("a failed resolve changed files: %s", diff)
			}
		})
	}
}

// TestVerifyRealRegistry checks every kind of verdict against a real
// docker-registry, including an image deleted after it was pinned.
func TestVerifyRealRegistry(t *testing.T) {
	reg := testutil.StartRegistry(t)
	h := reg.Host
	amd := pushImage(t, h+"/edge/agent:v1", "amd64")
	arm := pushImage(t, h+"/edge/agent-arm:v1", "arm64")
	noarch := pushImage(t, h+"/edge/noarch:v1", "")
	multi, plat := pushIndex(t, h+"/edge/multi:v1", "amd64", "arm64")
	armOnly, _ := pushIndex(t, h+"/edge/arm-only:v1", "arm64", "s390x")
	gone := pushImage(t, h+"/edge/gone:v1", "amd64")
	deleteManifest(t, gone)
	missingRepo := h + "/edge/never@sha256:" + strings.Repeat("ab", 32)

	files := []*releases.File{
		{Name: "release-x86_64.json", Arch: releases.X86_64, Base: "4.19.0", Images: []releases.Image{
			{Key: "agent", Ref: amd}, {Key: "multi", Ref: multi}, {Key: "noarch", Ref: noarch},
			{Key: "wrong-arch", Ref: arm}, {Key: "arm-only", Ref: armOnly}, {Key: "gone", Ref: gone},
			{Key: "never", Ref: missingRepo}, {Key: "tagged", Ref: h + "/edge/agent:v1"},
		}},
		{Name: "release-olm-aarch64.json", Component: "olm", Arch: releases.AArch64, Base: "4.19.0", Images: []releases.Image{
			{Key: "multi", Ref: multi}, {Key: "agent", Ref: arm},
		}},
	}
	checks, err := rebase.Verify(context.Background(), files, registryclient.Options{Jobs: 3})
	if err != nil {
		t.Fatalf("Verify() = %v", err)
	}
	want := []struct {
		file, key string
		ok        bool
		reason    rebase.Reason
		message   string
	}{
		{"release-x86_64.json", "agent", true, "", "image, linux/amd64"},
		{"release-x86_64.json", "multi", true, "", "index, linux/amd64 " + shortDigest(plat["amd64"])},
		{"release-x86_64.json", "noarch", true, "", "image, architecture not recorded"},
		{"release-x86_64.json", "wrong-arch", false, rebase.ReasonArchMissing, "image is linux/arm64, not linux/amd64"},
		{"release-x86_64.json", "arm-only", false, rebase.ReasonArchMissing, "index has no linux/amd64 image (it has linux/arm64, linux/s390x)"},
		{"release-x86_64.json", "gone", false, rebase.ReasonNotFound, "manifest not found (404): manifest unknown"},
		{"release-x86_64.json", "never", false, rebase.ReasonNotFound, "manifest not found (404): manifest unknown"},
		{"release-x86_64.json", "tagged", false, rebase.ReasonUnpinned, "not pinned by digest: a tag can move, and an airgapped device cannot pull it"},
		{"release-olm-aarch64.json", "multi", true, "", "index, linux/arm64 " + shortDigest(plat["arm64"])},
		{"release-olm-aarch64.json", "agent", true, "", "image, linux/arm64"},
	}
	if len(checks) != len(want) {
		t.Fatalf("Verify() gave %d checks, want %d: %+v", len(checks), len(want), checks)
	}
	for i, w := range want {
		c := checks[i]
		if c.File != w.file || c.Key != w.key || c.OK != w.ok || c.Reason != w.reason || c.Message != w.message {
			t.Errorf("check %d = {%s %s ok=%v %s %q}\nwant          {%s %s ok=%v %s %q}", i, c.File, c.Key, c.OK, c.Reason, c.Message, w.file, w.key, w.ok, w.reason, w.message)
		}
	}
	if checks[1].MediaType != string(types.OCIImageIndex) || checks[1].Digest != strings.SplitN(multi, "@", 2)[1] {
		t.Errorf("multi: media type %s digest %s", checks[1].MediaType, checks[1].Digest)
	}
	if n := rebase.Failed(checks); n != 5 {
		t.Errorf("Failed() = %d, want 5", n)
	}
}

func shortDigest(d string) string { return d[:len("sha256:")+12] }

// faultyRegistry is the in-process registry with 401 and 403 answers for
// some repositories, and a count of manifest requests per path.
type faultyRegistry struct {
	next http.Handler
	mu   sync.Mutex
	gets map[string]int
}

func (f *faultyRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.Contains(r.URL.Path, "/manifests/") {
		f.mu.Lock()
		f.gets[r.Method+" "+r.URL.Path]++
		f.mu.Unlock()
	}
	switch {
	case strings.HasPrefix(r.URL.Path, "/v2/private/"):
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
	case strings.HasPrefix(r.URL.Path, "/v2/denied/"):
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}`)
	default:
		f.next.ServeHTTP(w, r)
	}
}

// TestVerifyAuthErrorsAndDedup uses the in-process registry for what
// docker-registry without auth cannot do (401, 403), and counts requests:
// an index named by both arches' files is fetched once.
func TestVerifyAuthErrorsAndDedup(t *testing.T) {
	f := &faultyRegistry{next: registry.New(registry.Logger(log.New(io.Discard, "", 0))), gets: map[string]int{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	h := strings.TrimPrefix(srv.URL, "http://")
	multi, _ := pushIndex(t, h+"/edge/multi:v1", "amd64", "arm64")
	digest := "@sha256:" + strings.Repeat("cd", 32)
	files := []*releases.File{
		{Name: "release-x86_64.json", Arch: releases.X86_64, Images: []releases.Image{
			{Key: "multi", Ref: multi}, {Key: "private", Ref: h + "/private/app" + digest}, {Key: "denied", Ref: h + "/denied/app" + digest}}},
		{Name: "release-aarch64.json", Arch: releases.AArch64, Images: []releases.Image{{Key: "multi", Ref: multi}}},
	}
	f.gets = map[string]int{}
	checks, err := rebase.Verify(context.Background(), files, registryclient.Options{Jobs: 8, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		i      int
		reason rebase.Reason
		msg    string
	}{
		{1, rebase.ReasonUnauthorized, "unauthorized (401): authentication required; log in with 'podman login " + h + "'"},
		{2, rebase.ReasonForbidden, "access denied (403): requested access to the resource is denied; the credentials for " + h + " cannot read denied/app"},
	} {
		if c := checks[w.i]; c.OK || c.Reason != w.reason || c.Message != w.msg {
			t.Errorf("%s: %s %q, want %s %q", c.Key, c.Reason, c.Message, w.reason, w.msg)
		}
	}
	if !checks[0].OK || !checks[3].OK {
		t.Errorf("multi: %+v / %+v", checks[0], checks[3])
	}
	path := "GET /v2/edge/multi/manifests/" + strings.SplitN(multi, "@", 2)[1]
	if n := f.gets[path]; n != 1 {
		t.Errorf("%s requested %d times, want once for both files (all: %v)", path, n, f.gets)
	}
}

// BenchmarkVerify100 verifies 100 distinct images (70 single-arch images,
// whose config is read too, and 30 multi-arch indexes, spread over 10
// repositories as release files spread theirs over a few) against a real
// local docker-registry, with a new client each time (connection setup and
// registry pings included), as `release verify` does. make bench quotes it.
func BenchmarkVerify100(b *testing.B) {
	reg := testutil.StartRegistry(b)
	var images []releases.Image
	for i := range 100 {
		var ref string
		repo := fmt.Sprintf("%s/bench/component-%d", reg.Host, i%10)
		if i < 70 {
			ref = pushImage(b, fmt.Sprintf("%s:single-%02d", repo, i), "amd64")
		} else {
			ref, _ = pushIndex(b, fmt.Sprintf("%s:multi-%02d", repo, i), "amd64", "arm64")
		}
		images = append(images, releases.Image{Key: fmt.Sprintf("image-%02d", i), Ref: ref})
	}
	files := []*releases.File{{Name: "release-x86_64.json", Arch: releases.X86_64, Base: "4.19.0", Images: images}}
	b.ResetTimer()
	for b.Loop() {
		checks, err := rebase.Verify(context.Background(), files, registryclient.Options{Jobs: registryclient.DefaultJobs})
		if err != nil {
			b.Fatal(err)
		}
		if n := rebase.Failed(checks); n != 0 {
			b.Fatalf("%d images failed: %+v", n, checks)
		}
	}
}

// blobCounter counts blob GETs the registry serves.
type blobCounter struct {
	next http.Handler
	mu   sync.Mutex
	gets int
}

func (b *blobCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:") {
		b.mu.Lock()
		b.gets++
		b.mu.Unlock()
	}
	b.next.ServeHTTP(w, r)
}

// A manifest announcing a config larger than any image config fails as
// invalid without verify reading the config: a hostile registry cannot make
// it hold gigabytes.
func TestVerifyRefusesHugeConfig(t *testing.T) {
	b := &blobCounter{next: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	srv := httptest.NewServer(b)
	defer srv.Close()
	h := strings.TrimPrefix(srv.URL, "http://")
	p := &testutil.Pusher{Host: h}
	cfg, _ := testutil.Image("amd64", nil)
	if err := p.Blob("edge/huge", cfg.Data, cfg.Type); err != nil {
		t.Fatal(err)
	}
	desc := cfg.Descriptor(nil)
	desc.Size = 8 << 30
	data, err := json.Marshal(v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, Config: desc})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := p.Manifest("edge/huge", testutil.Raw{Data: data, Type: types.OCIManifestSchema1}, "")
	if err != nil {
		t.Fatal(err)
	}
	b.gets = 0
	checks, err := rebase.Verify(context.Background(), []*releases.File{{Name: "release-x86_64.json", Arch: releases.X86_64,
		Images: []releases.Image{{Key: "huge", Ref: ref}}}}, registryclient.Options{Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := checks[0]
	if c.OK || c.Reason != rebase.ReasonInvalid || !strings.Contains(c.Message, "config is 8589934592 bytes") {
		t.Errorf("check = ok %v %s %q, want invalid naming the config's size", c.OK, c.Reason, c.Message)
	}
	if b.gets != 0 {
		t.Errorf("verify fetched %d blobs, want none", b.gets)
	}
}
