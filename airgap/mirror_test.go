package airgap_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases"
)

// TestMirrorToLayout mirrors synthetic images from a real docker-registry
// into an OCI layout and checks it with skopeo, an independent reader.
func TestMirrorToLayout(t *testing.T) {
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	dir := filepath.Join(t.TempDir(), "images")
	to, err := airgap.ParseDestination("oci:" + dir)
	if err != nil {
		t.Fatal(err)
	}

	sum, err := airgap.Mirror(ctx, f.refs, to, opts(releases.X86_64, nil))
	if err != nil {
		t.Fatalf("Mirror() = %v; registry log: %s", err, reg.Log())
	}
	if sum.Images != 4 || sum.Blobs != len(f.amd64) || sum.Fetched != sum64(f.amd64) || sum.Skipped != 0 {
		t.Errorf("Mirror() summary = %+v; want 4 images, %d blobs, %d bytes fetched, 0 skipped", sum, len(f.amd64), sum64(f.amd64))
	}
	// 2 indexes + their amd64 manifests + 2 single manifests.
	if sum.Manifests != 6 {
		t.Errorf("Mirror() stored %d manifests, want 6", sum.Manifests)
	}

	// Blobs: exactly the amd64 blobs and the manifests, each once, none partial.
	files := blobFiles(t, dir)
	var blobBytes int64
	for d, size := range f.amd64 {
		if got, ok := files[d.Hex]; !ok || got != size {
			t.Errorf("layout blob %s: size %d, present %t; want %d bytes", d, got, ok, size)
		}
		blobBytes += size
	}
	if len(files) != len(f.amd64)+6 {
		t.Errorf("layout has %d blob files, want %d blobs + 6 manifests: %v", len(files), len(f.amd64), files)
	}

	// index.json names every image by its reference and keeps the digest
	// the reference pins (the index for multi-arch images).
	idx := readIndex(t, dir)
	if len(idx.Manifests) != 4 {
		t.Fatalf("index.json has %d entries, want 4", len(idx.Manifests))
	}
	for i, d := range idx.Manifests {
		ref := d.Annotations[airgap.AnnotationRefName]
		if ref != f.refs[i] || d.Annotations[airgap.AnnotationContainerdName] != ref {
			t.Errorf("index.json entry %d names %q / %q, want %q (sorted)", i, ref, d.Annotations[airgap.AnnotationContainerdName], f.refs[i])
		}
		if !strings.HasSuffix(ref, "@"+d.Digest.String()) {
			t.Errorf("index.json entry %s has digest %s, want the reference's", ref, d.Digest)
		}
	}

	// skopeo reads each image and picks the amd64 manifest out of indexes.
	for n, ref := range f.byName {
		out := skopeo(t, "inspect", "oci:"+dir+":"+ref)
		var info struct {
			Digest       string
			Architecture string
		}
		if err := json.Unmarshal(out, &info); err != nil {
			t.Fatalf("skopeo inspect %s: %v: %s", n, err, out)
		}
		// skopeo reports the top-level digest: the index's for indexes.
		wantDigest := ref[strings.Index(ref, "@")+1:]
		if info.Architecture != "amd64" || info.Digest != wantDigest {
			t.Errorf("skopeo inspect %s = %s %s, want amd64 %s", n, info.Architecture, info.Digest, wantDigest)
		}
	}
	// and copies one out of the layout, reading every blob.
	copyDir := filepath.Join(t.TempDir(), "copy")
	skopeo(t, "copy", "--quiet", "oci:"+dir+":"+f.byName["dns"], "dir:"+copyDir)
	if _, err := os.Stat(filepath.Join(copyDir, "manifest.json")); err != nil {
		t.Errorf("skopeo copy out of the layout wrote no manifest: %v", err)
	}

	// A rerun fetches nothing, and index.json is byte-identical.
	before := mustRead(t, filepath.Join(dir, "index.json"))
	sum, err = airgap.Mirror(ctx, f.refs, to, opts(releases.X86_64, nil))
	if err != nil {
		t.Fatalf("second Mirror() = %v", err)
	}
	if sum.Fetched != 0 || sum.Skipped != blobBytes {
		t.Errorf("second Mirror() fetched %d, skipped %d; want 0 and %d", sum.Fetched, sum.Skipped, blobBytes)
	}
	if after := mustRead(t, filepath.Join(dir, "index.json")); !bytes.Equal(before, after) {
		t.Errorf("index.json changed on a rerun:\n%s\n---\n%s", before, after)
	}
}

func TestMirrorPlatforms(t *testing.T) {
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	arm := []string{f.byName["cli"], f.byName["lvms"]}
	sort.Strings(arm)
	for _, tc := range []struct {
		name  string
		arch  releases.Arch
		all   bool
		refs  []string
		blobs int // unique config and layer blobs
		mans  int
	}{
		{"aarch64 takes arm64 manifests", releases.AArch64, false, arm, 5, 4},                     // baseArm shared + 2 layers + 2 configs
		{"all platforms", releases.X86_64, true, arm, 11, 6},                                      // 6 amd64 + 5 arm64
		{"per-arch reference kept", releases.AArch64, false, []string{f.childAMD64["cli"]}, 3, 1}, // the release names the amd64 manifest itself
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o := opts(tc.arch, nil)
			o.AllPlatforms = tc.all
			sum, err := airgap.Mirror(ctx, tc.refs, airgap.OCI(dir), o)
			if err != nil {
				t.Fatalf("Mirror() = %v", err)
			}
			if sum.Blobs != tc.blobs || sum.Manifests != tc.mans {
				t.Errorf("Mirror() = %d blobs, %d manifests; want %d, %d", sum.Blobs, sum.Manifests, tc.blobs, tc.mans)
			}
			for i, d := range readIndex(t, dir).Manifests {
				if !strings.HasSuffix(tc.refs[i], "@"+d.Digest.String()) {
					t.Errorf("index.json entry %d has digest %s, want the one of %s", i, d.Digest, tc.refs[i])
				}
			}
		})
	}
}

// TestMirrorToRegistry pushes to a prefix of the same docker-registry and
// checks digests are kept (indexes whole) and a rerun pushes nothing.
func TestMirrorToRegistry(t *testing.T) {
	reg := testutil.StartRegistry(t)
	f := newFixture(t, reg.Host)
	to, err := airgap.ParseDestination("docker://" + reg.Host + "/mirror/edge")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := airgap.Mirror(ctx, f.refs, to, opts(releases.X86_64, nil))
	if err != nil {
		t.Fatalf("Mirror() = %v; registry log: %s", err, reg.Log())
	}
	// Three base layers are each in two repositories: uploaded once,
	// mounted into the other.
	if sum.Images != 4 || sum.Blobs != len(f.all) || sum.Fetched != sum64(f.all) || sum.Uploads != len(f.all) || sum.Mounts != 3 {
		t.Errorf("Mirror() = %+v; want 4 images, %d blobs (every platform of the indexes), %d bytes in %d uploads, 3 mounts", sum, len(f.all), sum64(f.all), len(f.all))
	}
	for n, ref := range f.byName {
		src, _ := name.ParseReference(ref)
		dst := reg.Host + "/mirror/edge/" + src.Context().RepositoryStr() + "@" + src.Identifier()
		d, err := remote.Get(mustRef(t, dst))
		if err != nil {
			t.Errorf("%s: reading the mirrored %s: %v", n, dst, err)
			continue
		}
		if d.Digest.String() != src.Identifier() {
			t.Errorf("%s: mirrored digest %s, want %s", n, d.Digest, src.Identifier())
		}
	}
	sum, err = airgap.Mirror(ctx, f.refs, to, opts(releases.X86_64, nil))
	if err != nil {
		t.Fatalf("second Mirror() = %v", err)
	}
	if sum.Fetched != 0 || sum.Skipped != sum64(f.all) || sum.Uploads != 0 || sum.Mounts != 0 {
		t.Errorf("second Mirror() fetched %d, skipped %d; want 0, %d", sum.Fetched, sum.Skipped, sum64(f.all))
	}
}

func TestMirrorRefusesOtherDirectories(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := airgap.Mirror(ctx, nil, airgap.OCI(dir), opts(releases.X86_64, nil))
	want := "oci:" + dir + ": not an OCI image layout (it has files but no oci-layout); choose an empty or new directory"
	if err == nil || err.Error() != want || !errors.Is(err, airgap.ErrNotLayout) {
		t.Fatalf("Mirror(into a non-layout directory) = %v, want %q", err, want)
	}
}

func sum64(m map[v1.Hash]int64) int64 { return sum(m) }

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readIndex(t *testing.T, dir string) *v1.IndexManifest {
	t.Helper()
	idx, err := v1.ParseIndexManifest(bytes.NewReader(mustRead(t, filepath.Join(dir, "index.json"))))
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// skopeo runs Debian's skopeo, failing the test when it is missing (make
// test installs it) or fails.
func skopeo(t *testing.T, args ...string) []byte {
	t.Helper()
	bin := testutil.NeedTool(t, "skopeo", "skopeo")
	cmd := exec.Command(bin, append([]string{"--insecure-policy"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("skopeo %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// TestMirrorEmptyPlan leaves a valid, empty layout.
func TestMirrorEmptyPlan(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "images")
	sum, err := airgap.Mirror(ctx, nil, airgap.OCI(dir), opts(releases.X86_64, nil))
	if err != nil || sum.Images != 0 {
		t.Fatalf("Mirror(no images) = %+v, %v", sum, err)
	}
	if got := string(mustRead(t, filepath.Join(dir, "index.json"))); got != "{\n  \"schemaVersion\": 2,\n  \"mediaType\": \"application/vnd.oci.image.index.v1+json\",\n  \"manifests\": []\n}\n" {
		t.Errorf("index.json of an empty plan = %q", got)
	}
	if got := string(mustRead(t, filepath.Join(dir, "oci-layout"))); got != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout = %q", got)
	}
}
