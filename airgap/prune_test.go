package airgap_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sys/unix"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

// pruneSite is a site layout that took two releases (newFixture's and
// pushRelease2's, with its OS image) and a signature attachment of a
// kept and of a dropped image; want is a layout mirrored afresh with only
// the second release, its OS image and the kept signature: what the
// site must hold, byte for byte, once the first release is pruned.
type pruneSite struct {
	f          *fixture
	r2         *release2
	keep       []airgap.Kept
	site, want string
	keptSig    string
}

func newPruneSite(t *testing.T) *pruneSite {
	t.Helper()
	reg := testutil.StartRegistry(t)
	s := &pruneSite{f: newFixture(t, reg.Host), r2: pushRelease2(t, reg.Host)}
	// Signature attachments are mirrored as REPO:sha256-HEX.sig entries;
	// any image under that tag stands for one here.
	p := &testutil.Pusher{Host: reg.Host}
	sig := func(ref string) string {
		repo, digest, _ := strings.Cut(ref, "@")
		path := strings.TrimPrefix(repo, reg.Host+"/")
		tag := airgap.SignatureTag(digest)
		layers := []testutil.Layer{testutil.NewLayer(uint64(len(ref)), 1<<10)}
		if _, err := p.PushImage(path, "amd64", layers); err != nil {
			t.Fatal(err)
		}
		_, m := testutil.Image("amd64", layers)
		if _, err := p.Manifest(path, m, tag); err != nil {
			t.Fatal(err)
		}
		return repo + ":" + tag
	}
	s.keptSig = sig(s.r2.refs[0])
	dropped := sig(s.f.byName["router"])
	dir := t.TempDir()
	s.site, s.want = filepath.Join(dir, "site"), filepath.Join(dir, "want")
	for _, set := range [][]string{append(slices.Clone(s.f.refs), dropped), append(slices.Clone(s.r2.refs), s.r2.os, s.keptSig)} {
		if _, err := airgap.Mirror(ctx, set, airgap.OCI(s.site), opts(releases.X86_64, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := airgap.Mirror(ctx, append(slices.Clone(s.r2.refs), s.r2.os, s.keptSig), airgap.OCI(s.want), opts(releases.X86_64, nil)); err != nil {
		t.Fatal(err)
	}
	s.keep = []airgap.Kept{{Name: "day2/compose.lock.json", Refs: s.r2.refs}, {Name: "--image", Refs: []string{s.r2.os}}}
	return s
}

// indexNames are the image names of a layout's index.json, with digests.
func indexNames(t *testing.T, dir string) map[string]string {
	t.Helper()
	var idx v1.IndexManifest
	if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "index.json")), &idx); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range idx.Manifests {
		out[d.Annotations[airgap.AnnotationRefName]] = d.Digest.String()
	}
	return out
}

// readBack copies every kept image out of the layout with skopeo, for
// x86_64 (the platform the site mirrored): every manifest and blob it
// needs must be there and verify.
func (s *pruneSite) readBack(t *testing.T) {
	t.Helper()
	for _, ref := range append(slices.Clone(s.r2.refs), s.r2.os, s.keptSig) {
		skopeo(t, "--override-arch", "amd64", "--override-os", "linux", "copy", "oci:"+s.site+":"+ref, "oci:"+filepath.Join(t.TempDir(), "c")+":x")
	}
}

// TestPrune: a dry run reports what a layout mirrored afresh with the
// kept images lacks and changes nothing; --apply leaves exactly that
// layout's blobs and images, every kept image reading back, and frees the
// bytes no kept image reaches; a second prune finds nothing.
func TestPrune(t *testing.T) {
	s := newPruneSite(t)
	before, want := blobFiles(t, s.site), blobFiles(t, s.want)
	index := mustRead(t, filepath.Join(s.site, "index.json"))
	var unreachable int64
	var gone []string
	for f, n := range before {
		if _, ok := want[f]; !ok {
			unreachable += n
			gone = append(gone, "sha256:"+f)
		}
	}
	slices.Sort(gone)
	if len(gone) == 0 {
		t.Fatal("the fixture has nothing to prune")
	}

	r, err := airgap.Prune(ctx, airgap.OCI(s.site), s.keep, airgap.PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, b := range r.Blobs {
		listed = append(listed, b.Digest)
	}
	var droppedNames []string
	for _, im := range r.Images {
		droppedNames = append(droppedNames, im.Name)
	}
	slices.Sort(droppedNames)
	wantDropped := append(slices.Clone(s.f.refs), strings.SplitN(s.f.byName["router"], "@", 2)[0]+":"+airgap.SignatureTag(strings.SplitN(s.f.byName["router"], "@", 2)[1]))
	// lvms and dns are the same image in both releases: kept.
	wantDropped = slices.DeleteFunc(wantDropped, func(n string) bool { return slices.Contains(s.r2.refs, n) })
	slices.Sort(wantDropped)
	if r.Applied || !slices.Equal(listed, gone) || r.Freed != unreachable || !slices.Equal(droppedNames, wantDropped) ||
		r.KeptImages != len(s.r2.refs)+1 || r.KeptSignatures != 1 || r.KeptBlobs != len(want) {
		t.Errorf("dry run = %+v\nwant blobs %v (%d bytes), images %v, %d kept blobs", r, gone, unreachable, wantDropped, len(want))
	}
	if !mapsEqual(blobFiles(t, s.site), before) || !bytes.Equal(index, mustRead(t, filepath.Join(s.site, "index.json"))) {
		t.Fatal("the dry run changed the layout")
	}

	r, err = airgap.Prune(ctx, airgap.OCI(s.site), s.keep, airgap.PruneOptions{Apply: true})
	if err != nil || !r.Applied || r.Freed != unreachable {
		t.Fatalf("Prune(--apply) = %+v, %v; want %d bytes freed", r, err, unreachable)
	}
	if got := blobFiles(t, s.site); !mapsEqual(got, want) {
		t.Errorf("after the prune the layout holds %d blobs, a fresh mirror of the kept images %d", len(got), len(want))
	}
	if got, w := indexNames(t, s.site), indexNames(t, s.want); !mapsEqual(got, w) {
		t.Errorf("after the prune index.json names %v, want %v", got, w)
	}
	s.readBack(t)
	// A dropped image is gone.
	if _, err := airgap.Mirror(ctx, []string{s.f.byName["router"]}, airgap.OCI(t.TempDir()), airgap.Options{From: airgap.OCI(s.site)}); !errors.Is(err, airgap.ErrNotInLayout) {
		t.Errorf("reading a pruned image = %v", err)
	}
	r, err = airgap.Prune(ctx, airgap.OCI(s.site), s.keep, airgap.PruneOptions{Apply: true})
	if err != nil || r.Freed != 0 || len(r.Images) != 0 || len(r.Blobs) != 0 {
		t.Errorf("pruning again = %+v, %v; want nothing to remove", r, err)
	}
}

// TestPruneInterrupted: a prune stopped after some blobs, at each point,
// leaves every kept image whole; the next run finishes it.
func TestPruneInterrupted(t *testing.T) {
	s := newPruneSite(t)
	pristine := t.TempDir()
	if err := os.CopyFS(pristine, os.DirFS(s.site)); err != nil {
		t.Fatal(err)
	}
	want := blobFiles(t, s.want)
	stop := errors.New("interrupted")
	for _, after := range []int{1, 3} {
		os.RemoveAll(s.site)
		if err := os.CopyFS(s.site, os.DirFS(pristine)); err != nil {
			t.Fatal(err)
		}
		o := airgap.PruneOptions{Apply: true}
		airgap.InterruptPruneAfter(&o, after, stop)
		if _, err := airgap.Prune(ctx, airgap.OCI(s.site), s.keep, o); !errors.Is(err, stop) {
			t.Fatalf("the interrupted prune = %v", err)
		}
		got := blobFiles(t, s.site)
		if len(got) != len(blobFiles(t, pristine))-after {
			t.Errorf("stopped after %d blobs, %d of %d are left", after, len(got), len(blobFiles(t, pristine)))
		}
		s.readBack(t)
		r, err := airgap.Prune(ctx, airgap.OCI(s.site), s.keep, airgap.PruneOptions{Apply: true})
		if err != nil || len(r.Images) != 0 {
			t.Fatalf("the rerun = %+v, %v; want the blobs only (index.json was swapped before)", r, err)
		}
		if got := blobFiles(t, s.site); !mapsEqual(got, want) {
			t.Errorf("after the rerun the layout holds %d blobs, want %d", len(got), len(want))
		}
		s.readBack(t)
	}
}

// TestPruneRefusals: each is one line, and the layout stays as it was.
func TestPruneRefusals(t *testing.T) {
	s := newPruneSite(t)
	before := blobFiles(t, s.site)
	index := mustRead(t, filepath.Join(s.site, "index.json"))
	bundle := filepath.Join(t.TempDir(), "bundle")
	o := opts(releases.X86_64, nil)
	o.Bundle = &airgap.BundleOptions{Since: []airgap.Base{{Name: "want", Layout: airgap.OCI(s.want)}}}
	if _, err := airgap.Mirror(ctx, s.r2.refs, airgap.OCI(bundle), o); err != nil {
		t.Fatal(err)
	}
	notLayout := t.TempDir()
	os.WriteFile(filepath.Join(notLayout, "notes.txt"), []byte("mine"), 0o644)
	for _, tc := range []struct {
		name   string
		target airgap.Target
		keep   []airgap.Kept
		is     error
		want   string
	}{
		{"nothing kept", airgap.OCI(s.site), nil, airgap.ErrNothingKept, "--keep compose.lock.json"},
		{"an empty lock", airgap.OCI(s.site), []airgap.Kept{{Name: "empty.lock.json"}}, airgap.ErrNothingKept, "nothing to keep"},
		{"a lock the layout lacks", airgap.OCI(s.site), []airgap.Kept{s.keep[0], {Name: "other.lock.json", Refs: []string{s.f.host + "/ocp/other@sha256:" + strings.Repeat("a", 64)}}}, airgap.ErrKeptMissing,
			"other.lock.json names " + s.f.host + "/ocp/other@sha256:aaaa"},
		{"a bundle", airgap.OCI(bundle), s.keep[:1], airgap.ErrBadDestination, "it is a differential bundle"},
		{"an archive", airgap.Target{Transport: airgap.TransportArchive, Path: "x.tar"}, s.keep, airgap.ErrBadDestination, "prune removes images from an OCI layout"},
		{"not a layout", airgap.OCI(notLayout), s.keep, airgap.ErrNotLayout, "no oci-layout in it"},
		{"a file", airgap.OCI(filepath.Join(notLayout, "notes.txt")), s.keep, airgap.ErrBadDestination, "it is a file"},
		{"no such directory", airgap.OCI(filepath.Join(notLayout, "nothing")), s.keep, os.ErrNotExist, "no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := airgap.Prune(ctx, tc.target, tc.keep, airgap.PruneOptions{Apply: true})
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Prune = %v; want one line with %q", err, tc.want)
			}
		})
	}
	if !mapsEqual(blobFiles(t, s.site), before) || !bytes.Equal(index, mustRead(t, filepath.Join(s.site, "index.json"))) {
		t.Error("a refused prune changed the layout")
	}

	// A layout a mirror is writing (its oci-layout flock'ed).
	lock, err := os.Open(filepath.Join(s.site, "oci-layout"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	_, err = airgap.Prune(ctx, airgap.OCI(s.site), s.keep, airgap.PruneOptions{Apply: true})
	if err == nil || !strings.Contains(err.Error(), "another process is writing it") || strings.Contains(err.Error(), "\n") {
		t.Errorf("pruning a locked layout = %v", err)
	}
	if !mapsEqual(blobFiles(t, s.site), before) {
		t.Error("the refused prune changed the layout")
	}
	unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	// And a prune holds the lock mirror takes: mirror waits for no one.
	if _, err := airgap.Prune(ctx, airgap.OCI(s.site), s.keep, airgap.PruneOptions{Apply: true}); err != nil {
		t.Errorf("pruning once the lock is released = %v", err)
	}
}

// TestPruneRegistryReport: a site registry that took two releases, a
// tagged tool and an image pushed by digest alone: the report finds every
// kept image, lists the repository whose tag no kept image has, and the
// bytes only that tag reaches, marks the repository of untagged manifests
// only (which the API cannot list), and counts the repositories it
// scanned, where such manifests may remain; a kept image the registry
// lacks is reported missing. Nothing is deleted.
func TestPruneRegistryReport(t *testing.T) {
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	r2 := pushRelease2(t, reg.Host)
	toolLayers := []testutil.Layer{testutil.NewLayer(77, 300<<10)}
	p := &testutil.Pusher{Host: reg.Host}
	if _, err := p.PushImage("old/tool", "amd64", toolLayers); err != nil {
		t.Fatal(err)
	}
	cfg, m := testutil.Image("amd64", toolLayers)
	if _, err := p.Manifest("old/tool", m, "v1"); err != nil {
		t.Fatal(err)
	}
	tool := reg.Host + "/old/tool:v1"
	gone, err := p.PushImage("old/gone", "amd64", []testutil.Layer{testutil.NewLayer(78, 10<<10)})
	if err != nil {
		t.Fatal(err)
	}
	site := testutil.StartRegistry(t)
	to, err := airgap.ParseDestination("docker://" + site.Host + "/site")
	if err != nil {
		t.Fatal(err)
	}
	repos := map[string]bool{}
	for _, ref := range slices.Concat(f.refs, r2.refs, []string{tool, gone, r2.os}) {
		r, err := name.ParseReference(ref)
		if err != nil {
			t.Fatal(err)
		}
		repos[r.Context().RepositoryStr()] = true
	}
	for _, set := range [][]string{append(slices.Clone(f.refs), tool, gone), append(slices.Clone(r2.refs), r2.os)} {
		if _, err := airgap.Mirror(ctx, set, to, opts(releases.X86_64, nil)); err != nil {
			t.Fatal(err)
		}
	}
	keep := []airgap.Kept{{Name: "day2/compose.lock.json", Refs: r2.refs}, {Name: "--image", Refs: []string{r2.os}}}
	r, err := airgap.PruneRegistryReport(ctx, to, keep, airgap.PruneOptions{Registry: opts("", nil).Registry})
	if err != nil {
		t.Fatal(err)
	}
	want := toolLayers[0].Desc.Size + int64(len(cfg.Data)) + int64(len(m.Data))
	if r.KeptImages != len(r2.refs)+1 || len(r.Missing) != 0 || len(r.Repositories) != 2 ||
		r.Repositories[0].Name != "site/old/gone" || r.Repositories[0].Kept || !r.Repositories[0].UntaggedOnly || len(r.Repositories[0].Tags) != 0 ||
		r.Repositories[1].Name != "site/old/tool" || r.Repositories[1].Kept || r.Repositories[1].UntaggedOnly || !slices.Equal(r.Repositories[1].Tags, []string{"v1"}) ||
		r.Reclaimable != want || r.Scanned != len(repos) {
		t.Errorf("report = %+v; want site/old/gone untagged only, site/old/tool:v1, %d bytes, %d repositories scanned", r, want, len(repos))
	}
	// Nothing was deleted: the tag still reads.
	skopeo(t, "inspect", "--tls-verify=false", "--raw", "docker://"+site.Host+"/site/old/tool:v1")

	// A kept image the registry lacks.
	other := reg.Host + "/ocp/other@" + m.Digest().String()
	r, err = airgap.PruneRegistryReport(ctx, to, []airgap.Kept{{Name: "x.lock.json", Refs: []string{r2.refs[0], other}}}, airgap.PruneOptions{Registry: opts("", nil).Registry})
	if err != nil || len(r.Missing) != 1 || r.Missing[0].Ref != other {
		t.Errorf("report with a missing kept image = %+v, %v", r, err)
	}
	if _, err := airgap.PruneRegistryReport(ctx, to, nil, airgap.PruneOptions{}); !errors.Is(err, airgap.ErrNothingKept) {
		t.Errorf("report with nothing kept = %v", err)
	}
}

// TestParseBundleBaseImage: a base may be an image pinned by digest (the
// OS image the site runs), and nothing else beside it.
func TestParseBundleBaseImage(t *testing.T) {
	d := "sha256:" + strings.Repeat("a", 64)
	doc := func(base string) []byte {
		return []byte(`{"schema":"microshift-compose/bundle/v1","arch":"x86_64","compositions":[],"images":[{"ref":"quay.io/a/b@` + d + `","digest":"` + d + `"}],"base":[` + base + `],"omitted":[],"omitted_bytes":0}`)
	}
	for _, tc := range []struct {
		name, base, want string
	}{
		{"pinned", `{"image":"registry.example.com/os@` + d + `","images":1}`, ""},
		{"a tag", `{"image":"registry.example.com/os:4.19","images":1}`, `base[0].image "registry.example.com/os:4.19" is not an image reference pinned by digest`},
		{"not a reference", `{"image":"../os@` + d + `","images":1}`, "is not an image reference pinned by digest"},
		{"and a composition", `{"image":"registry.example.com/os@` + d + `","composition":"` + strings.Repeat("1", 64) + `","images":1}`, "base[0] has an image and a composition or an index"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := airgap.ParseBundle("bundle.json", doc(tc.base))
			if tc.want == "" {
				if err != nil || b.Base[0].Image == "" {
					t.Errorf("ParseBundle = %+v, %v", b, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bundle.json") || strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseBundle = %v; want one line naming bundle.json with %q", err, tc.want)
			}
		})
	}
}
