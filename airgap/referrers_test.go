package airgap_test

import (
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// referrersRegistry is go-containerregistry's registry with the OCI 1.1
// referrers API (Debian's docker-registry, distribution 2.8, has none).
func referrersRegistry(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

// attachedImage pushes an image with a .sig tag and a sigstore-bundle
// referrer (what cosign --new-bundle-format attaches) and returns the
// image's reference and the bundle.
func attachedImage(t *testing.T, host string) (ref string, bundle []byte) {
	t.Helper()
	p := &testutil.Pusher{Host: host}
	ref, err := p.PushImage("app/one", "amd64", []testutil.Layer{testutil.NewLayer(7, 4096)})
	if err != nil {
		t.Fatal(err)
	}
	_, digest, _ := strings.Cut(ref, "@")
	sig, err := p.PushImage("app/one", "amd64", []testutil.Layer{testutil.NewLayer(8, 512)})
	if err != nil {
		t.Fatal(err)
	}
	sigManifest := fetchRaw(t, sig)
	if _, err := p.Manifest("app/one", sigManifest, airgap.SignatureTag(digest)); err != nil {
		t.Fatal(err)
	}
	referrer, bundle := bundleReferrer(t, p, ref)
	if _, err := p.Manifest("app/one", referrer, ""); err != nil {
		t.Fatal(err)
	}
	return ref, bundle
}

// bundleReferrer makes a referrer manifest of subject carrying a (fake)
// sigstore bundle, its blobs pushed.
func bundleReferrer(t *testing.T, p *testutil.Pusher, subject string) (testutil.Raw, []byte) {
	t.Helper()
	sub := fetchRaw(t, subject)
	bundle := []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","for":"` + subject + `"}`)
	empty := []byte(`{}`)
	for _, b := range []struct {
		data []byte
		mt   types.MediaType
	}{{empty, "application/vnd.oci.empty.v1+json"}, {bundle, airgap.SigstoreBundleType}} {
		if err := p.Blob("app/one", b.data, b.mt); err != nil {
			t.Fatal(err)
		}
	}
	desc := func(data []byte, mt types.MediaType) v1.Descriptor {
		h, n, _ := v1.SHA256(strings.NewReader(string(data)))
		return v1.Descriptor{MediaType: mt, Size: n, Digest: h}
	}
	subDesc := desc(sub.Data, sub.Type)
	m := struct {
		v1.Manifest
		ArtifactType string `json:"artifactType"`
	}{v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        desc(empty, "application/vnd.oci.empty.v1+json"),
		Layers:        []v1.Descriptor{desc(bundle, airgap.SigstoreBundleType)},
		Subject:       &subDesc,
	}, airgap.SigstoreBundleType}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return testutil.Raw{Data: data, Type: types.OCIManifestSchema1}, bundle
}

func fetchRaw(t *testing.T, ref string) testutil.Raw {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Get(r)
	if err != nil {
		t.Fatal(err)
	}
	return testutil.Raw{Data: d.Manifest, Type: d.MediaType}
}

// referrersOf lists the referrers a registry reports for ref (the API, or
// the sha256-<hex> tag).
func referrersOf(t *testing.T, ref string) []v1.Descriptor {
	t.Helper()
	d, err := name.NewDigest(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Referrers(d)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	return m.Manifests
}

// TestReferrersAPI: attachments found through the referrers API (and the
// .sig tag) are listed with the bundle they carry, copied to a layout that
// names them, read back from it, and pushed to a registry with the API
// and to one without it (Debian's docker-registry: the referrers tag),
// where each lists the referrer for the image.
func TestReferrersAPI(t *testing.T) {
	src := referrersRegistry(t)
	ref, bundle := attachedImage(t, src)
	o := opts("", nil)
	atts, err := airgap.Attachments(ctx, []string{ref}, airgap.Target{}, o.Registry)
	if err != nil {
		t.Fatal(err)
	}
	check := func(where string, atts []airgap.Attachment) {
		t.Helper()
		if len(atts) != 2 {
			t.Fatalf("%s: %d attachments, want 2: %+v", where, len(atts), atts)
		}
		kinds := map[string]airgap.Attachment{}
		for _, a := range atts {
			kinds[a.Kind] = a
			if a.Image != ref {
				t.Errorf("%s: attachment %s of %s, want of %s", where, a.Ref, a.Image, ref)
			}
		}
		r := kinds[airgap.KindReferrer]
		if r.ArtifactType != airgap.SigstoreBundleType || string(r.Bundle) != string(bundle) || !strings.HasPrefix(r.Ref, src+"/app/one@sha256:") {
			t.Errorf("%s: referrer %+v, want the bundle", where, r)
		}
		if s := kinds[airgap.KindSignature]; !strings.HasSuffix(s.Ref, ".sig") || airgap.AttachmentKind(s.Ref) != airgap.KindSignature {
			t.Errorf("%s: signature %+v", where, s)
		}
	}
	check("registry", atts)
	refs := []string{ref}
	for _, a := range atts {
		refs = append(refs, a.Ref)
	}

	dir := filepath.Join(t.TempDir(), "layout")
	sum, err := airgap.Mirror(ctx, refs, airgap.OCI(dir), o)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Images != 1 || sum.Signatures != 1 || sum.Referrers != 1 {
		t.Errorf("summary: %d images, %d signatures, %d referrers, want 1 each", sum.Images, sum.Signatures, sum.Referrers)
	}
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := v1.ParseIndexManifest(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	var referrer string
	for _, a := range atts {
		if a.Kind == airgap.KindReferrer {
			referrer = a.Ref
		}
	}
	artifactTypes := map[string]string{}
	for _, d := range idx.Manifests {
		artifactTypes[d.Annotations[airgap.AnnotationRefName]] = d.ArtifactType
	}
	if artifactTypes[referrer] != airgap.SigstoreBundleType || len(artifactTypes) != 3 || artifactTypes[ref] != "" {
		t.Errorf("index.json artifact types %v: want the referrer's on its entry only", artifactTypes)
	}
	fromLayout, err := airgap.Attachments(ctx, []string{ref}, airgap.OCI(dir), o.Registry)
	if err != nil {
		t.Fatal(err)
	}
	check("layout", fromLayout)

	for _, c := range []struct {
		name string
		host string
	}{
		{"referrers API", referrersRegistry(t)},
		{"referrers tag", testutil.StartRegistry(t).Host},
	} {
		o := opts("", nil)
		o.From = airgap.OCI(dir)
		if _, err := airgap.Mirror(ctx, refs, airgap.Target{Transport: airgap.TransportDocker, Registry: c.host, Prefix: "edge"}, o); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		moved := c.host + "/edge/app/one@" + strings.SplitN(ref, "@", 2)[1]
		listed := referrersOf(t, moved)
		if len(listed) != 1 || listed[0].Digest.String() != strings.SplitN(referrer, "@", 2)[1] {
			t.Errorf("%s: the destination lists referrers %+v, want the one copied", c.name, listed)
		}
	}
}

// TestReferrerWithoutSubject: a referrer copied without the image it
// refers to is refused before anything is written.
func TestReferrerWithoutSubject(t *testing.T) {
	src := referrersRegistry(t)
	ref, _ := attachedImage(t, src)
	o := opts("", nil)
	atts, err := airgap.Attachments(ctx, []string{ref}, airgap.Target{}, o.Registry)
	if err != nil {
		t.Fatal(err)
	}
	var referrer string
	for _, a := range atts {
		if a.Kind == airgap.KindReferrer {
			referrer = a.Ref
		}
	}
	dir := filepath.Join(t.TempDir(), "layout")
	_, err = airgap.Mirror(ctx, []string{referrer}, airgap.OCI(dir), o)
	if !errors.Is(err, airgap.ErrSubjectMismatch) || !strings.Contains(err.Error(), "refusing referrer "+referrer+": ") {
		t.Fatalf("Mirror(referrer alone) = %v, want a refusal naming it", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a refused mirror created %s", dir)
	}
}

// TestAttachmentKind: cosign's tags by their form; anything else is none.
func TestAttachmentKind(t *testing.T) {
	hex := strings.Repeat("ab", 32)
	for _, tc := range []struct{ ref, want string }{
		{"quay.io/a/b:sha256-" + hex + ".sig", airgap.KindSignature},
		{"quay.io/a/b:sha256-" + hex + ".att", airgap.KindAttestation},
		{"quay.io/a/b:sha256-" + hex + ".sbom", airgap.KindSBOM},
		{"quay.io/a/b:sha256-" + hex, ""},
		{"quay.io/a/b:sha256-" + hex[:62] + ".sig", ""},
		{"quay.io/a/b@sha256:" + hex, ""},
		{"quay.io/a/b:sha256-" + strings.ToUpper(hex) + ".sig", ""},
		{"quay.io/a/b:sha256-" + hex + ".sig.x", ""},
	} {
		if got := airgap.AttachmentKind(tc.ref); got != tc.want {
			t.Errorf("AttachmentKind(%q) = %q, want %q", tc.ref, got, tc.want)
		}
	}
}
