package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// cosign's flags for the plain-HTTP loopback registries of the tests.
var cosignHTTP = []string{"--allow-http-registry", "--allow-insecure-registry"}

// attach runs cosign with the signer's password and COSIGN_EXPERIMENTAL
// (which --registry-referrers-mode=oci-1-1 needs).
func (s *signer) run(t *testing.T, args ...string) string {
	t.Helper()
	s.env.set("COSIGN_EXPERIMENTAL", "1")
	defer s.env.unset("COSIGN_EXPERIMENTAL")
	return s.env.must(t, s.bin, append(args, cosignHTTP...)...)
}

// cosignVerdicts are cosign's verdicts, at the reference, on every kind of
// attachment the test makes: the .sig signature, the OCI 1.1 signature,
// the .att attestation and the sigstore-bundle attestation (referrer).
func (s *signer) cosignVerdicts(t *testing.T, pub, trustedRoot, ref string) map[string]string {
	t.Helper()
	s.env.set("COSIGN_EXPERIMENTAL", "1")
	defer s.env.unset("COSIGN_EXPERIMENTAL")
	out := map[string]string{}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"sig", []string{"verify", "--key", pub, "--insecure-ignore-tlog"}},
		{"oci-1-1 signature", []string{"verify", "--key", pub, "--insecure-ignore-tlog", "--experimental-oci11"}},
		{"att", []string{"verify-attestation", "--key", pub, "--insecure-ignore-tlog", "--type", "spdxjson"}},
		{"bundle attestation", []string{"verify-attestation", "--key", pub, "--insecure-ignore-tlog", "--new-bundle-format", "--trusted-root", trustedRoot, "--type", "spdxjson"}},
	} {
		r := s.env.exec(t, "", s.bin, append(append(c.args, cosignHTTP...), ref)...)
		if r.code != 0 {
			out[c.name] = "refused: " + lastLine(r.stderr)
			continue
		}
		out[c.name] = "verified: " + lastLine(r.stderr)
	}
	return out
}

// TestReferrersTravel: what cosign attaches to an image (a .sig signature,
// an OCI 1.1 signature, a .att attestation, a sigstore-bundle attestation,
// a .sbom) travels with it through mirror to another registry, to an
// oci: layout and an oci-archive: and from them to registries again, where
// cosign verify --key accepts each of them. The source and destination
// registries are Debian's docker-registry (distribution 2.8), which has no
// referrers API: referrers are listed and written through the
// sha256-<digest> referrers tag. Bad input: a referrer whose subject is
// another image, a bundle signed by another key, each refused in one line
// with nothing written.
func TestReferrersTravel(t *testing.T) {
	t.Parallel() // see parallelE2E
	bin := e2eBinary(t)
	s := newSigner(t)
	priv, pub := s.keyPair(t, "release")
	otherPriv, _ := s.keyPair(t, "other")
	src := testutil.StartRegistry(t)
	rel := pushRelease(t, &testutil.Pusher{Host: src.Host}, false)
	work := t.TempDir()
	out := filepath.Join(work, "out")
	e := newUserEnv(t)
	e.must(t, bin, "build", "--profile", "minimal", "--arch", "x86_64", "--release-dir", rel, "--output", out)
	lock := filepath.Join(out, "compose.lock.json")
	refs := nonEmptyLines(string(mustReadFile(t, filepath.Join(out, "images.txt"))))
	if len(refs) < 3 {
		t.Fatalf("images.txt has %d images, want 3 or more", len(refs))
	}
	trustedRoot := filepath.Join(work, "trusted_root.json")
	writeFileMode(t, trustedRoot, []byte(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`), 0o644)
	sbom := filepath.Join(work, "sbom.spdx.json")
	writeFileMode(t, sbom, []byte(`{"spdxVersion":"SPDX-2.3","SPDXID":"SPDXRef-DOCUMENT","name":"app","dataLicense":"CC0-1.0","documentNamespace":"https://example.com/app"}`), 0o644)

	s.sign(t, priv, refs...)
	subject := refs[0]
	s.run(t, "sign", "--key", priv, "--tlog-upload=false", "-y", "--registry-referrers-mode=oci-1-1", subject)
	s.run(t, "attest", "--key", priv, "--tlog-upload=false", "-y", "--type", "spdxjson", "--predicate", sbom, subject)
	s.run(t, "attest", "--key", priv, "--tlog-upload=false", "-y", "--type", "spdxjson", "--predicate", sbom, "--new-bundle-format", subject)
	s.run(t, "attach", "sbom", "--sbom", sbom, "--type", "spdx", subject)
	want := map[string]string{}
	for k, v := range s.cosignVerdicts(t, pub, trustedRoot, subject) {
		if !strings.HasPrefix(v, "verified") {
			t.Fatalf("cosign at the source: %s %s", k, v)
		}
		want[k] = "verified"
	}
	n := len(refs)
	summary := regexp.MustCompile(`^mirrored ` + strconv.Itoa(n) + ` images and ` + strconv.Itoa(n) + ` signatures, 1 attestation, 1 SBOM, 2 referrers \(`)

	moved := func(host, ref string) string { return host + "/edge" + strings.TrimPrefix(ref, src.Host) }
	checkAt := func(where, ref string) {
		t.Helper()
		got := s.cosignVerdicts(t, pub, trustedRoot, ref)
		for k := range want {
			if !strings.HasPrefix(got[k], "verified") {
				t.Errorf("%s: cosign %s of %s: %s", where, k, ref, got[k])
			}
		}
		t.Logf("%s: cosign at %s: %v", where, ref, got)
	}

	// Registry to registry: by default with --verify-key.
	dst := testutil.StartRegistry(t)
	r := e.exec(t, "", bin, "mirror", "--lock", lock, "--verify-key", pub, "--quiet", "--to", "docker://"+dst.Host+"/edge")
	if r.code != 0 || !summary.MatchString(r.stdout) {
		t.Fatalf("mirror to a registry: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	t.Logf("registry: %s", strings.TrimSpace(r.stdout))
	checkAt("registry", moved(dst.Host, subject))

	// To a layout and an archive, which name the referrers in index.json
	// (with their artifactType), and on from them to registries.
	layout := filepath.Join(work, "layout")
	r = e.exec(t, "", bin, "mirror", "--lock", lock, "--verify-key", pub, "--all-platforms", "--quiet", "--to", "oci:"+layout)
	if r.code != 0 || !summary.MatchString(r.stdout) {
		t.Fatalf("mirror to a layout: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	idx, err := v1.ParseIndexManifest(strings.NewReader(string(mustReadFile(t, filepath.Join(layout, "index.json")))))
	if err != nil {
		t.Fatal(err)
	}
	var referrers []string
	for _, d := range idx.Manifests {
		if d.ArtifactType != "" {
			referrers = append(referrers, d.ArtifactType)
		}
	}
	if len(referrers) != 2 || !strings.Contains(strings.Join(referrers, " "), "application/vnd.dev.sigstore.bundle") {
		t.Errorf("the layout's index.json names referrers of types %v, want 2, a sigstore bundle among them", referrers)
	}
	archive := filepath.Join(work, "images.tar")
	r = e.exec(t, "", bin, "mirror", "--lock", lock, "--referrers", "--quiet", "--to", "oci-archive:"+archive)
	if r.code != 0 || !summary.MatchString(r.stdout) {
		t.Fatalf("mirror --referrers to an archive: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct{ name, from string }{
		{"layout", "oci:" + layout},
		{"archive", "oci-archive:" + archive},
	} {
		hop := testutil.StartRegistry(t)
		// With the plan, the layout's referrers are found by subject; without, every image it names is copied.
		args := []string{"mirror", "--from", c.from, "--quiet", "--to", "docker://" + hop.Host + "/edge"}
		if c.name == "layout" {
			args = append(args, "--lock", lock, "--referrers")
		}
		r := e.exec(t, "", bin, args...)
		if r.code != 0 || !summary.MatchString(r.stdout) {
			t.Fatalf("mirror --from %s: exit %d, stdout %q, stderr %s", c.from, r.code, r.stdout, r.stderr)
		}
		checkAt(c.name+" then registry", moved(hop.Host, subject))
	}

	// Bad input. A referrer listed for an image it does not refer to: the
	// referrers tag of refs[1] lists the bundle attestation of refs[0].
	fallback := fallbackIndex(t, src.Host, subject)
	other := refs[1]
	repo, digest, _ := strings.Cut(other, "@")
	p := &testutil.Pusher{Host: src.Host}
	if _, err := p.Manifest(strings.TrimPrefix(repo, src.Host+"/"), testutil.Raw{Data: fallback, Type: types.OCIImageIndex}, strings.Replace(digest, ":", "-", 1)); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(work, "bad")
	r = e.exec(t, "", bin, "mirror", "--lock", lock, "--verify-key", pub, "--quiet", "--to", "oci:"+bad)
	wantLine := regexp.MustCompile(`^error: looking up what is attached to the images: refusing referrer sha256:[0-9a-f]{64} of ` + regexp.QuoteMeta(other) + `: the referrer's subject is not the image: its subject is ` + regexp.QuoteMeta(strings.SplitN(subject, "@", 2)[1]) + `$`)
	if lines := nonEmptyLines(r.stderr); r.code == 0 || len(lines) != 1 || !wantLine.MatchString(lines[0]) {
		t.Errorf("a referrer of another image: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a refused mirror created %s", bad)
	}
	t.Logf("subject mismatch: %s", strings.TrimSpace(r.stderr))
	// Remove the false listing (an empty index at the tag), then attach a
	// bundle signed by another key to refs[2].
	if _, err := p.Manifest(strings.TrimPrefix(repo, src.Host+"/"), testutil.Raw{Data: []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`), Type: types.OCIImageIndex}, strings.Replace(digest, ":", "-", 1)); err != nil {
		t.Fatal(err)
	}
	s.run(t, "attest", "--key", otherPriv, "--tlog-upload=false", "-y", "--type", "spdxjson", "--predicate", sbom, "--new-bundle-format", refs[2])
	r = e.exec(t, "", bin, "mirror", "--lock", lock, "--verify-key", pub, "--quiet", "--to", "oci:"+bad)
	wantLine = regexp.MustCompile(`^error: verifying the sigstore bundle ` + regexp.QuoteMeta(strings.SplitN(refs[2], "@", 2)[0]) + `@sha256:[0-9a-f]{64} attached to ` + regexp.QuoteMeta(refs[2]) + ` with --verify-key: sigstore bundle refused: signed by none of the keys; nothing was mirrored$`)
	if lines := nonEmptyLines(r.stderr); r.code == 0 || len(lines) != 1 || !wantLine.MatchString(lines[0]) {
		t.Errorf("a bundle signed by another key: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a refused mirror created %s", bad)
	}
	t.Logf("other key: %s", strings.TrimSpace(r.stderr))
	// Without --verify-key, --referrers copies it (nothing is verified),
	// and --referrers=false leaves every attachment behind.
	r = e.exec(t, "", bin, "mirror", "--lock", lock, "--referrers=false", "--quiet", "--to", "oci:"+filepath.Join(work, "plain"))
	if r.code != 0 || !strings.HasPrefix(r.stdout, "mirrored "+strconv.Itoa(n)+" images (") {
		t.Errorf("mirror --referrers=false: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
}

// fallbackIndex is the referrers tag index (sha256-<hex>) of ref at host.
func fallbackIndex(t *testing.T, host, ref string) []byte {
	t.Helper()
	repo, digest, _ := strings.Cut(ref, "@")
	path := strings.TrimPrefix(repo, host+"/")
	r := testutil.Registry{Host: host}
	req, err := http.NewRequest(http.MethodGet, r.URL()+"/v2/"+path+"/manifests/"+strings.Replace(digest, ":", "-", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", string(types.OCIImageIndex))
	resp, err := r.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var idx v1.IndexManifest
	if err := json.NewDecoder(resp.Body).Decode(&idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Manifests) == 0 {
		t.Fatalf("no referrers tag for %s", ref)
	}
	data, err := json.Marshal(idx)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
