package airgap_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sys/unix"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

// release2 is the next release of newFixture's images, in the same
// registry: the cli index gets a new amd64 layer (its arm64 image stays),
// router a new layer, lvms and dns are unchanged, console is new in a
// repository of its own on the first release's base layer; plus an OS
// image of its own layers, which mirror --image adds.
type release2 struct {
	refs []string // the plan's, sorted
	os   string
	// all are the config and layer blobs of every platform of refs and os;
	// manifests their manifests and indexes, read back from the registry.
	all, manifests map[v1.Hash]int64
}

const (
	id1 = "1111111111111111111111111111111111111111111111111111111111111111"
	id2 = "2222222222222222222222222222222222222222222222222222222222222222"
)

func pushRelease2(t *testing.T, host string) *release2 {
	t.Helper()
	r := &release2{all: map[v1.Hash]int64{}, manifests: map[v1.Hash]int64{}}
	p := &testutil.Pusher{Host: host}
	baseA := testutil.NewLayer(1, 64<<10)
	baseB := testutil.NewLayer(2, 48<<10)
	baseArm := testutil.NewLayer(3, 40<<10)
	layer := func(seed uint64) testutil.Layer { return testutil.NewLayer(seed, 16<<10+int64(seed)) }
	record := func(arch string, layers []testutil.Layer) {
		cfg, _ := testutil.Image(arch, layers)
		r.all[cfg.Digest()] = int64(len(cfg.Data))
		for _, l := range layers {
			r.all[l.Desc.Digest] = l.Desc.Size
		}
	}
	index := func(path string, amd, arm []testutil.Layer) string {
		ref, _, err := p.PushIndex(path, []string{"amd64", "arm64"}, map[string][]testutil.Layer{"amd64": amd, "arm64": arm})
		if err != nil {
			t.Fatal(err)
		}
		record("amd64", amd)
		record("arm64", arm)
		return ref
	}
	single := func(path string, layers []testutil.Layer) string {
		ref, err := p.PushImage(path, "amd64", layers)
		if err != nil {
			t.Fatal(err)
		}
		record("amd64", layers)
		return ref
	}
	r.refs = []string{
		index("ocp/release", []testutil.Layer{baseA, layer(20)}, []testutil.Layer{baseArm, layer(11)}),
		index("lvms/operator", []testutil.Layer{baseB, layer(12)}, []testutil.Layer{baseArm, layer(13)}),
		single("ocp/release", []testutil.Layer{baseA, layer(24)}),
		single("ocp/dns", []testutil.Layer{baseA, baseB, layer(15)}),
		single("ocp/console", []testutil.Layer{baseA, layer(25)}),
	}
	sort.Strings(r.refs)
	r.os = single("example/microshift-os", []testutil.Layer{testutil.NewLayer(40, 200<<10), testutil.NewLayer(41, 30<<10)})
	// The manifests, as go-containerregistry reads them back.
	for _, ref := range append(slices.Clone(r.refs), r.os) {
		d, err := remote.Get(mustRef(t, ref))
		if err != nil {
			t.Fatal(err)
		}
		r.manifests[d.Digest] = d.Size
		if d.MediaType.IsIndex() {
			idx, err := d.ImageIndex()
			if err != nil {
				t.Fatal(err)
			}
			im, err := idx.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range im.Manifests {
				r.manifests[c.Digest] = c.Size
			}
		}
	}
	return r
}

// tarBlobs lists the blobs of an archive file: digest -> size.
func tarBlobs(t *testing.T, data []byte) map[v1.Hash]int64 {
	t.Helper()
	out := map[v1.Hash]int64{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if hex, ok := strings.CutPrefix(h.Name, "blobs/sha256/"); ok && hex != "" {
			out[v1.Hash{Algorithm: "sha256", Hex: hex}] = h.Size
		}
	}
}

// tarFile is one file of an archive.
func tarFile(t *testing.T, data []byte, name string) []byte {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s not in the archive: %v", name, err)
		}
		if h.Name == name {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

func archiveTarget(t *testing.T, path string) airgap.Target {
	t.Helper()
	to, err := airgap.ParseDestination("oci-archive:" + path)
	if err != nil {
		t.Fatal(err)
	}
	return to
}

// TestDifferentialBundle writes a bundle of the next release against the
// first one's lock and layout, checks it holds exactly the new blobs and
// every manifest (read with tar and skopeo), applies it to a layout and a
// registry that hold the first release (twice: nothing changes), and
// refuses it where the base is missing, for another arch, or to a
// registry destination.
func TestDifferentialBundle(t *testing.T) {
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	r2 := pushRelease2(t, reg.Host)
	work := t.TempDir()
	base := filepath.Join(work, "release1.tar")
	if _, err := airgap.Mirror(ctx, f.refs, archiveTarget(t, base), opts(releases.X86_64, nil)); err != nil {
		t.Fatal(err)
	}
	newRefs := append(slices.Clone(r2.refs), r2.os)
	bundleOpts := func(since ...airgap.Base) airgap.Options {
		o := opts(releases.X86_64, nil)
		o.Bundle = &airgap.BundleOptions{Since: since, Compositions: []string{id2}, Extra: []string{r2.os}}
		return o
	}
	lockBase := airgap.Base{Name: "release1.lock.json", Refs: f.refs, Composition: id1, Arch: releases.X86_64}

	bundle := filepath.Join(work, "day2.tar")
	sum, err := airgap.Mirror(ctx, newRefs, archiveTarget(t, bundle), bundleOpts(lockBase))
	if err != nil {
		t.Fatalf("Mirror(--since lock) = %v", err)
	}
	data := mustRead(t, bundle)

	// Exactly: every manifest of the new images, and the config and layer
	// blobs the first release does not have.
	// A lock's base is what a site that holds it holds: its x86_64
	// platform (what mirror --lock --to oci: writes), whatever the
	// bundle's archive carries; a layout's base is what it holds.
	leftOut := func(base map[v1.Hash]int64) (want map[v1.Hash]int64, omitted []string, omittedBytes int64) {
		want = map[v1.Hash]int64{}
		for d, n := range r2.all {
			if _, old := base[d]; old {
				omitted = append(omitted, d.String())
				omittedBytes += n
			} else {
				want[d] = n
			}
		}
		for d, n := range r2.manifests {
			want[d] = n
		}
		sort.Strings(omitted)
		return want, omitted, omittedBytes
	}
	want, omitted, omittedBytes := leftOut(f.amd64)
	wantFromLayout, omittedFromLayout, _ := leftOut(f.all)
	if len(omittedFromLayout) <= len(omitted) {
		t.Fatalf("the fixture's releases share no blob of another platform than x86_64")
	}
	if got := tarBlobs(t, data); !mapsEqual(got, want) {
		t.Errorf("the bundle holds %d blobs %v, want %d: %v", len(got), got, len(want), want)
	}
	if sum.Bundle != airgap.BundleWritten || sum.Omitted != len(omitted) || sum.OmittedBytes != omittedBytes || sum.Images != 6 {
		t.Errorf("Mirror(--since) summary = %+v, want %d blobs (%d bytes) omitted", sum, len(omitted), omittedBytes)
	}
	b, err := airgap.ParseBundle("bundle", tarFile(t, data, airgap.BundleFile))
	if err != nil {
		t.Fatal(err)
	}
	var gotOmitted, gotImages []string
	for _, o := range b.Omitted {
		gotOmitted = append(gotOmitted, o.Digest)
		if !slices.Contains(f.refs, o.In) {
			t.Errorf("omitted blob %s is held by %q, not an image of the base", o.Digest, o.In)
		}
	}
	for _, im := range b.Images {
		gotImages = append(gotImages, im.Ref)
		if im.Extra != (im.Ref == r2.os) {
			t.Errorf("bundle image %s: extra = %t", im.Ref, im.Extra)
		}
	}
	wantImages := slices.Sorted(slices.Values(newRefs))
	if !slices.Equal(gotOmitted, omitted) || b.OmittedBytes != omittedBytes || !slices.Equal(gotImages, wantImages) ||
		b.Arch != "x86_64" || !slices.Equal(b.Compositions, []string{id2}) || len(b.Base) != 1 || b.Base[0].Composition != id1 || b.Base[0].Images != 4 {
		t.Errorf("bundle file = %+v; want images %v, omitted %v", b, wantImages, omitted)
	}

	// Deterministic: the same inputs give the same bytes.
	again := filepath.Join(work, "again.tar")
	if _, err := airgap.Mirror(ctx, newRefs, archiveTarget(t, again), bundleOpts(lockBase)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, mustRead(t, again)) {
		t.Errorf("two bundles of the same inputs differ")
	}

	// Against the first release's archive: what it holds, every platform,
	// is left out; the base is recorded by the digest of its index.json.
	fromLayout := filepath.Join(work, "day2-layout.tar")
	if _, err := airgap.Mirror(ctx, newRefs, archiveTarget(t, fromLayout), bundleOpts(airgap.Base{Name: base, Layout: archiveTarget(t, base)})); err != nil {
		t.Fatalf("Mirror(--since archive) = %v", err)
	}
	ldata := mustRead(t, fromLayout)
	if !mapsEqual(tarBlobs(t, ldata), wantFromLayout) {
		t.Errorf("the bundle against the archive holds other blobs than the archive lacks")
	}
	lb, err := airgap.ParseBundle("bundle", tarFile(t, ldata, airgap.BundleFile))
	if err != nil {
		t.Fatal(err)
	}
	if wantIdx := "sha256:" + sha256Hex(tarFile(t, mustRead(t, base), "index.json")); len(lb.Base) != 1 || lb.Base[0].Index != wantIdx || lb.Base[0].Images != 4 {
		t.Errorf("bundle against the archive records base %+v, want index %s", lb.Base, wantIdx)
	}

	// skopeo reads every manifest of the bundle, and the OS image whole
	// (its blobs are all new).
	for _, ref := range newRefs {
		raw := skopeo(t, "inspect", "--raw", "oci-archive:"+bundle+":"+ref)
		if !strings.HasSuffix(ref, "@sha256:"+sha256Hex(raw)) {
			t.Errorf("skopeo reads %s from the bundle with another digest", ref)
		}
	}
	skopeo(t, "copy", "oci-archive:"+bundle+":"+r2.os, "oci:"+filepath.Join(work, "os-copy")+":os")

	t.Run("apply to a layout", func(t *testing.T) {
		site := filepath.Join(t.TempDir(), "site")
		o := opts("", nil)
		o.From = archiveTarget(t, base)
		if _, err := airgap.Mirror(ctx, f.refs, airgap.OCI(site), o); err != nil {
			t.Fatal(err)
		}
		o.From = archiveTarget(t, bundle)
		sum, err := airgap.Mirror(ctx, newRefs, airgap.OCI(site), o)
		if err != nil {
			t.Fatalf("applying the bundle = %v", err)
		}
		if sum.Bundle != airgap.BundleApplied || sum.Images != 6 || sum.Omitted != len(omitted) {
			t.Errorf("applying the bundle: summary %+v", sum)
		}
		before := blobFiles(t, site)
		index := mustRead(t, filepath.Join(site, "index.json"))
		// Every image of both releases reads back whole.
		for _, ref := range append(slices.Clone(f.refs), newRefs...) {
			skopeo(t, "copy", "--all", "oci:"+site+":"+ref, "oci:"+filepath.Join(t.TempDir(), "c")+":x")
		}
		// Twice: nothing fetched, nothing changed.
		sum, err = airgap.Mirror(ctx, newRefs, airgap.OCI(site), o)
		if err != nil || sum.Fetched != 0 {
			t.Fatalf("applying the bundle again = %+v, %v", sum, err)
		}
		if !mapsEqual(blobFiles(t, site), before) || !bytes.Equal(index, mustRead(t, filepath.Join(site, "index.json"))) {
			t.Errorf("applying the bundle again changed the layout")
		}
	})

	t.Run("apply to a registry", func(t *testing.T) {
		dst := testutil.StartRegistry(t)
		to, err := airgap.ParseDestination("docker://" + dst.Host + "/site")
		if err != nil {
			t.Fatal(err)
		}
		o := opts("", nil)
		o.From = archiveTarget(t, base)
		if _, err := airgap.Mirror(ctx, f.refs, to, o); err != nil {
			t.Fatal(err)
		}
		o.From = archiveTarget(t, bundle)
		sum, err := airgap.Mirror(ctx, newRefs, to, o)
		if err != nil {
			t.Fatalf("applying the bundle to the registry = %v", err)
		}
		// Only the new blobs were uploaded; the OS image's repository is
		// new, and gets nothing it does not need.
		// (The bundle also carries the arm64 blobs the first release
		// shares, which a lock's base leaves in: the registry, holding
		// every platform, has them.)
		var newBytes int64
		for d, n := range want {
			_, manifest := r2.manifests[d]
			_, old := f.all[d]
			if !manifest && !old {
				newBytes += n
			}
		}
		if sum.Fetched != newBytes {
			t.Errorf("applying the bundle uploaded %d bytes, want the %d new ones", sum.Fetched, newBytes)
		}
		// ocp/console is a new repository: the base layer it shares with
		// the first release, which the bundle leaves out, is mounted.
		if sum.Mounts < 1 {
			t.Errorf("applying the bundle mounted nothing into the new repository: %+v", sum)
		}
		for _, ref := range newRefs {
			src, _ := name.ParseReference(ref)
			skopeo(t, "copy", "--all", "--src-tls-verify=false", "docker://"+dst.Host+"/site/"+src.Context().RepositoryStr()+"@"+src.Identifier(), "oci:"+filepath.Join(t.TempDir(), "c")+":x")
		}
		sum, err = airgap.Mirror(ctx, newRefs, to, o)
		if err != nil || sum.Uploads != 0 || sum.Mounts != 0 {
			t.Errorf("applying the bundle to the registry again = %+v, %v; want no upload", sum, err)
		}
	})

	t.Run("base missing", func(t *testing.T) {
		o := opts("", nil)
		o.From = archiveTarget(t, bundle)
		site := filepath.Join(t.TempDir(), "site")
		_, err := airgap.Mirror(ctx, newRefs, airgap.OCI(site), o)
		if !errors.Is(err, airgap.ErrBaseMissing) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), omitted[0]) || !strings.Contains(err.Error(), "composition "+id1[:12]) {
			t.Errorf("applying to an empty layout = %v; want one line naming %s and the base", err, omitted[0])
		}
		if _, err := os.Stat(site); !os.IsNotExist(err) {
			t.Errorf("the refused bundle created the destination: %v", err)
		}
		// A registry: nothing is pushed.
		dst := testutil.StartRegistry(t)
		to, _ := airgap.ParseDestination("docker://" + dst.Host + "/site")
		_, err = airgap.Mirror(ctx, newRefs, to, o)
		if !errors.Is(err, airgap.ErrBaseMissing) {
			t.Errorf("applying to an empty registry = %v", err)
		}
		resp, err := http.Get("http://" + dst.Host + "/v2/_catalog")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var cat struct{ Repositories []string }
		if err := json.NewDecoder(resp.Body).Decode(&cat); err != nil || len(cat.Repositories) != 0 {
			t.Errorf("the refused bundle wrote repositories %v (%v)", cat.Repositories, err)
		}
		// A layout holding part of the base, damaged: the damaged blob
		// counts as missing and stays as it was.
		part := filepath.Join(t.TempDir(), "site")
		po := opts("", nil)
		po.From = archiveTarget(t, base)
		if _, err := airgap.Mirror(ctx, f.refs, airgap.OCI(part), po); err != nil {
			t.Fatal(err)
		}
		victim := filepath.Join(part, "blobs", "sha256", strings.TrimPrefix(omitted[0], "sha256:"))
		if err := os.WriteFile(victim, []byte("damaged"), 0o644); err != nil {
			t.Fatal(err)
		}
		snap := blobFiles(t, part)
		_, err = airgap.Mirror(ctx, newRefs, airgap.OCI(part), o)
		if !errors.Is(err, airgap.ErrBaseMissing) || !strings.Contains(err.Error(), omitted[0]) || !strings.Contains(err.Error(), "is not there") {
			t.Errorf("applying over a damaged base blob = %v", err)
		}
		if !mapsEqual(blobFiles(t, part), snap) {
			t.Errorf("the refused bundle changed the layout")
		}
	})

	t.Run("refusals", func(t *testing.T) {
		other := lockBase
		other.Arch = releases.AArch64
		dir := filepath.Join(t.TempDir(), "x.tar")
		if _, err := airgap.Mirror(ctx, newRefs, archiveTarget(t, dir), bundleOpts(other)); !errors.Is(err, airgap.ErrOtherArch) || !strings.Contains(err.Error(), "aarch64") {
			t.Errorf("Mirror(--since a lock for aarch64) = %v", err)
		}
		if airgapExists(dir) {
			t.Errorf("a refused bundle wrote %s", dir)
		}
		to, _ := airgap.ParseDestination("docker://" + reg.Host + "/x")
		if _, err := airgap.Mirror(ctx, newRefs, to, bundleOpts(lockBase)); !errors.Is(err, airgap.ErrBadDestination) {
			t.Errorf("Mirror(--since) to a registry = %v", err)
		}
		// A plain mirror into a bundle, and a bundle into a full layout.
		bdir := filepath.Join(t.TempDir(), "bundle")
		if _, err := airgap.Mirror(ctx, newRefs, airgap.OCI(bdir), bundleOpts(lockBase)); err != nil {
			t.Fatal(err)
		}
		if _, err := airgap.Mirror(ctx, f.refs, airgap.OCI(bdir), opts(releases.X86_64, nil)); !errors.Is(err, airgap.ErrBadDestination) || !strings.Contains(err.Error(), "differential bundle") {
			t.Errorf("a plain mirror into a bundle = %v", err)
		}
		full := filepath.Join(t.TempDir(), "full")
		if _, err := airgap.Mirror(ctx, f.refs, airgap.OCI(full), opts(releases.X86_64, nil)); err != nil {
			t.Fatal(err)
		}
		if _, err := airgap.Mirror(ctx, newRefs, airgap.OCI(full), bundleOpts(lockBase)); !errors.Is(err, airgap.ErrBadDestination) {
			t.Errorf("a bundle into a full layout = %v", err)
		}
	})
}

func airgapExists(path string) bool {
	for _, p := range []string{path, path + airgap.PartsSuffix} {
		if _, err := os.Lstat(p); err == nil {
			return true
		}
	}
	return false
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestApplyToLayoutBeingWritten: a layout another process is writing (its
// oci-layout flock'ed) is refused in one line and left as it was.
func TestApplyToLayoutBeingWritten(t *testing.T) {
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	r2 := pushRelease2(t, reg.Host)
	work := t.TempDir()
	site := filepath.Join(work, "site")
	if _, err := airgap.Mirror(ctx, f.refs, airgap.OCI(site), opts(releases.X86_64, nil)); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(work, "day2.tar")
	o := opts(releases.X86_64, nil)
	o.Bundle = &airgap.BundleOptions{Since: []airgap.Base{{Name: "site", Layout: airgap.OCI(site)}}}
	if _, err := airgap.Mirror(ctx, r2.refs, archiveTarget(t, bundle), o); err != nil {
		t.Fatal(err)
	}
	lock, err := os.Open(filepath.Join(site, "oci-layout"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	before := blobFiles(t, site)
	index := mustRead(t, filepath.Join(site, "index.json"))
	ao := opts("", nil)
	ao.From = archiveTarget(t, bundle)
	_, err = airgap.Mirror(ctx, r2.refs, airgap.OCI(site), ao)
	if err == nil || !strings.Contains(err.Error(), "another mirror is writing it") || strings.Contains(err.Error(), "\n") {
		t.Errorf("applying to a locked layout = %v", err)
	}
	if !mapsEqual(blobFiles(t, site), before) || !bytes.Equal(index, mustRead(t, filepath.Join(site, "index.json"))) {
		t.Errorf("the refused run changed the layout")
	}
	unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	if _, err := airgap.Mirror(ctx, r2.refs, airgap.OCI(site), ao); err != nil {
		t.Errorf("applying once the lock is released = %v", err)
	}
}

// TestReach: what a layout holds is what its images reach, read either
// way; a bundle reaches the blobs it leaves out too.
func TestReach(t *testing.T) {
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	dir := filepath.Join(t.TempDir(), "images")
	if _, err := airgap.Mirror(ctx, f.refs, airgap.OCI(dir), opts(releases.X86_64, nil)); err != nil {
		t.Fatal(err)
	}
	fromLayout, err := airgap.LayoutReach(ctx, airgap.OCI(dir), opts("", nil).Registry)
	if err != nil {
		t.Fatal(err)
	}
	o := opts("", nil)
	o.From = airgap.OCI(dir)
	fromImages, err := airgap.ImagesReach(ctx, f.refs, o)
	if err != nil {
		t.Fatal(err)
	}
	files := blobFiles(t, dir)
	got := map[string]int64{}
	for _, b := range fromLayout.Blobs() {
		got[b.Digest.Hex] = b.Size
		if fb, ok := fromImages.Get(b.Digest); !ok || fb.Size != b.Size || fb.Manifest != b.Manifest {
			t.Errorf("blob %s: the layout reaches it, the images %+v", b.Digest, fb)
		}
	}
	if !mapsEqual(got, files) || fromImages.Len() != fromLayout.Len() || fromLayout.Bytes() != fromImages.Bytes() {
		t.Errorf("LayoutReach = %d blobs (%d bytes), ImagesReach %d; the layout holds %d files", fromLayout.Len(), fromLayout.Bytes(), fromImages.Len(), len(files))
	}
	// From the registry, for x86_64: the same.
	reg1, err := airgap.ImagesReach(ctx, f.refs, opts(releases.X86_64, nil))
	if err != nil || reg1.Len() != fromLayout.Len() {
		t.Errorf("ImagesReach(registry, x86_64) = %d blobs, %v; want %d", reg1.Len(), err, fromLayout.Len())
	}
}

// TestMirrorFromLayoutLargeBlob reads a layer larger than the input
// gate's 32 MiB file limit out of an oci: layout, into another layout, an
// archive packed straight from it, and as the base a bundle is checked
// against.
func TestMirrorFromLayoutLargeBlob(t *testing.T) {
	reg := testutil.StartRegistry(t)
	big := testutil.NewLayer(77, 33<<20)
	ref, err := (&testutil.Pusher{Host: reg.Host}).PushImage("big/layer", "amd64", []testutil.Layer{big})
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	src := filepath.Join(work, "src")
	if _, err := airgap.Mirror(ctx, []string{ref}, airgap.OCI(src), opts(releases.X86_64, nil)); err != nil {
		t.Fatal(err)
	}
	o := opts("", nil)
	o.From = airgap.OCI(src)
	for _, to := range []airgap.Target{airgap.OCI(filepath.Join(work, "copy")), archiveTarget(t, filepath.Join(work, "copy.tar"))} {
		if sum, err := airgap.Mirror(ctx, []string{ref}, to, o); err != nil || sum.Fetched < big.Desc.Size {
			t.Errorf("Mirror(--from oci: with a %d-byte layer) to %s = %+v, %v", big.Desc.Size, to, sum, err)
		}
	}
	if got := blobFiles(t, filepath.Join(work, "copy"))[big.Desc.Digest.Hex]; got != big.Desc.Size {
		t.Errorf("the copied layer has %d bytes, want %d", got, big.Desc.Size)
	}
	// A bundle of the same image against the layout leaves the layer out,
	// and applies onto it after its base was checked by hashing the layer.
	b := filepath.Join(work, "b.tar")
	bo := opts(releases.X86_64, nil)
	bo.Bundle = &airgap.BundleOptions{Since: []airgap.Base{{Name: "src", Layout: airgap.OCI(src)}}}
	if _, err := airgap.Mirror(ctx, []string{ref}, archiveTarget(t, b), bo); err != nil {
		t.Fatal(err)
	}
	ao := opts("", nil)
	ao.From = archiveTarget(t, b)
	if sum, err := airgap.Mirror(ctx, []string{ref}, airgap.OCI(filepath.Join(work, "copy")), ao); err != nil || sum.OmittedBytes < big.Desc.Size {
		t.Errorf("applying the bundle = %+v, %v", sum, err)
	}
}
