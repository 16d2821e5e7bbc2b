package airgap_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/sizes"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/releases"
)

// statedSize pushes an image whose manifest states size for its one layer
// (the registry stores the manifest as it is; no layer of that size
// exists) and returns its reference.
func statedSize(t *testing.T, p *testutil.Pusher, repo string, size int64) string {
	t.Helper()
	layer := testutil.NewLayer(9, 100)
	cfg, _ := testutil.Image("amd64", []testutil.Layer{layer})
	if err := p.Blob(repo, cfg.Data, cfg.Type); err != nil {
		t.Fatal(err)
	}
	d := layer.Desc
	d.Size = size
	data, _ := json.Marshal(v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, Config: cfg.Descriptor(nil), Layers: []v1.Descriptor{d}})
	ref, err := p.Manifest(repo, testutil.Raw{Data: data, Type: types.OCIManifestSchema1}, "x")
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func footprintOf(refs ...string) (*plan.Footprint, error) {
	pl := &plan.Plan{Arch: "x86_64", Components: []plan.Component{{Name: "core"}}}
	for _, r := range refs {
		pl.Images = append(pl.Images, plan.Image{Ref: r, Uses: []plan.ImageUse{{Component: "core"}}})
	}
	return airgap.Footprint(ctx, pl, airgap.Options{Arch: releases.X86_64})
}

// TestFootprintRefusesSizes: sizes a registry states that no blob can have
// are refused naming the image and the blob; three layers of 2^62 bytes,
// whose int64 sum was printed as a negative total with exit 0, among them.
func TestFootprintRefusesSizes(t *testing.T) {
	reg := testutil.NewFaultyRegistry(t)
	p := &testutil.Pusher{Host: reg.Host}
	for _, tc := range []struct {
		name  string
		sizes []int64
		want  string
	}{
		{"a layer of 2^62 bytes, three times", []int64{1 << 62, 1<<62 + 1, 1<<62 + 2}, "bytes: size out of range (more than the 1 TiB a blob may have)"},
		{"a layer of 2^63-1 bytes", []int64{1<<63 - 1}, "states a size of 9223372036854775807 bytes"},
		{"a negative layer", []int64{-1}, "states a size of -1 bytes: size out of range (a size cannot be negative)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var refs []string
			for i, s := range tc.sizes {
				refs = append(refs, statedSize(t, p, "app/huge"+string(rune('a'+i)), s))
			}
			fp, err := footprintOf(refs...)
			// The images are read side by side: any of them may be the
			// one named.
			named := false
			for _, r := range refs {
				named = named || err != nil && strings.HasPrefix(err.Error(), r+": unsupported manifest: descriptor sha256:")
			}
			if !named || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, sizes.ErrOutOfRange) {
				t.Errorf("Footprint() = %+v, %v\nwant %q", fp, err, tc.want)
			}
		})
	}
	// A thousand blobs of 1 TiB each: within every bound, a correct total.
	ref := statedSize(t, p, "app/tib", sizes.MaxBlob)
	refs := make([]string, 1000)
	for i := range refs {
		refs[i] = ref
	}
	fp, err := footprintOf(refs...)
	if err != nil {
		t.Fatalf("Footprint() of 1000 images of a 1 TiB layer = %v", err)
	}
	if fp.Total.Compressed <= 1000*sizes.MaxBlob || fp.Total.Unique <= sizes.MaxBlob || fp.Total.Unique >= 2*sizes.MaxBlob {
		t.Errorf("Footprint() total %+v", fp.Total)
	}
	// 1025 of them add up to more than any total may be.
	_, err = footprintOf(append(refs, refs[:25]...)...)
	if err == nil || !strings.Contains(err.Error(), ": with it the images: the sizes add up to more than 1 PiB") {
		t.Errorf("Footprint() of 1025 images of a 1 TiB layer = %v", err)
	}
}

// TestFootprintIndexReasons: an index that lists the arch as something
// other than an image manifest (another index, a schema 1 manifest) is
// refused for that reason, not as an index without the platform (which
// read "no manifest for linux/amd64 ... (it has linux/amd64)"); a schema 1
// manifest named directly gets the same reason, true for footprint and
// diff as for mirror.
func TestFootprintIndexReasons(t *testing.T) {
	reg := testutil.NewFaultyRegistry(t)
	p := &testutil.Pusher{Host: reg.Host}
	amd64 := []v1.Platform{{OS: "linux", Architecture: "amd64"}}
	layer := testutil.NewLayer(3, 100)
	cfg, m := testutil.Image("amd64", []testutil.Layer{layer})
	for _, b := range []testutil.Raw{cfg, {Data: layer.Data, Type: layer.Desc.MediaType}} {
		if err := p.Blob("app/nested", b.Data, b.Type); err != nil {
			t.Fatal(err)
		}
	}
	inner := testutil.Index([]testutil.Raw{m}, amd64)
	for _, r := range []testutil.Raw{m, inner} {
		if _, err := p.Manifest("app/nested", r, ""); err != nil {
			t.Fatal(err)
		}
	}
	nested, err := p.Manifest("app/nested", testutil.Index([]testutil.Raw{inner}, amd64), "outer")
	if err != nil {
		t.Fatal(err)
	}
	s1 := testutil.Raw{Data: []byte(`{"schemaVersion":1,"name":"app/s1","tag":"latest","architecture":"amd64","fsLayers":[],"history":[]}`), Type: types.DockerManifestSchema1}
	schema1, err := p.Manifest("app/s1", s1, "latest")
	if err != nil {
		t.Fatal(err)
	}
	s1Index, err := p.Manifest("app/s1", testutil.Index([]testutil.Raw{s1}, amd64), "index")
	if err != nil {
		t.Fatal(err)
	}
	const schema1Reason = "a Docker schema 1 manifest, a format deprecated since 2017 that this tool does not read (it states no layer sizes and has no OCI form); re-push the image with Docker schema 2 or OCI media types"
	for _, tc := range []struct {
		name, ref, want string
	}{
		{"an index inside the index", nested, nested + ": unsupported manifest: the index lists another index (" + inner.Digest().String() + ") for linux/amd64 (x86_64), and an index inside an index is not read: name the inner index or the image manifest by digest"},
		{"a schema 1 manifest in the index", s1Index, s1Index + ": unsupported manifest: the index lists " + s1.Digest().String() + " for linux/amd64 (x86_64): " + schema1Reason},
		{"a schema 1 manifest", schema1, schema1 + ": unsupported manifest: " + s1.Digest().String() + " is " + schema1Reason},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := footprintOf(tc.ref)
			if err == nil || err.Error() != tc.want || !errors.Is(err, airgap.ErrUnsupported) || errors.Is(err, airgap.ErrNoPlatform) {
				t.Errorf("Footprint() = %v\nwant %q", err, tc.want)
			}
		})
	}
}
