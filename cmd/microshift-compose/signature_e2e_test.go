package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/sigverify"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
	"github.com/microshift-compose/microshift-compose/render/trust"
)

// The signature tests use the real cosign, built pinned from the Go module
// proxy (COSIGN_VERSION in the Makefile) by the first test that needs it
// (testutil.PinnedTool).

// signer runs cosign with generated keys, against plain-HTTP loopback
// registries, with no transparency log.
type signer struct {
	bin string
	env *userEnv
	dir string
}

func newSigner(t *testing.T) *signer {
	t.Helper()
	s := &signer{bin: testutil.PinnedTool(t, "cosign"), env: newUserEnv(t), dir: t.TempDir()}
	s.env.set("COSIGN_PASSWORD", "test-password")
	return s
}

// generatedKey is one cosign key pair of the test binary: tests that ask
// for a key of one name share it (cosign generate-key-pair costs a
// scrypt run); a test's keys of different names differ.
type generatedKey struct {
	once    sync.Once
	priv    []byte
	pub     []byte
	failure string
}

var (
	generatedKeysMu sync.Mutex
	generatedKeys   = map[string]*generatedKey{}
)

// keyPair writes NAME.key and NAME.pub (encrypted with COSIGN_PASSWORD)
// into the signer's directory and returns their paths: cosign
// generate-key-pair's, run once per NAME and test binary.
func (s *signer) keyPair(t *testing.T, name string) (priv, pub string) {
	t.Helper()
	generatedKeysMu.Lock()
	k := generatedKeys[name]
	if k == nil {
		k = &generatedKey{}
		generatedKeys[name] = k
	}
	generatedKeysMu.Unlock()
	prefix := filepath.Join(s.dir, name)
	priv, pub = prefix+".key", prefix+".pub"
	k.once.Do(func() {
		// Until it succeeds: exec may end this test (t.Fatal), and the
		// tests waiting for the key must fail too.
		k.failure = "cosign generate-key-pair failed in another test"
		r := s.env.exec(t, "", s.bin, "generate-key-pair", "--output-key-prefix", prefix)
		if r.code != 0 {
			k.failure = fmt.Sprintf("cosign generate-key-pair: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			return
		}
		var err error
		if k.priv, err = os.ReadFile(priv); err == nil {
			k.pub, err = os.ReadFile(pub)
		}
		if err != nil {
			k.failure = err.Error()
			return
		}
		k.failure = ""
	})
	if k.failure != "" {
		t.Fatal(k.failure)
	}
	for p, data := range map[string][]byte{priv: k.priv, pub: k.pub} {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return priv, pub
}

// sign signs the refs with key, in one cosign run: cosign decrypts the
// key (scrypt, most of a signature's CPU) once for all of them.
func (s *signer) sign(t *testing.T, key string, refs ...string) {
	t.Helper()
	args := append([]string{"sign", "--key", key, "--tlog-upload=false", "--allow-http-registry", "--allow-insecure-registry", "-y"}, refs...)
	s.env.must(t, s.bin, args...)
}

// verify is cosign's verdict on ref.
func (s *signer) verify(t *testing.T, pub, ref string) bool {
	t.Helper()
	r := s.env.exec(t, "", s.bin, "verify", "--key", pub, "--insecure-ignore-tlog", "--allow-http-registry", "--allow-insecure-registry", ref)
	return r.code == 0
}

// copyTag copies the manifest (and its blobs) at src (a tag or digest
// reference) to dst, on plain-HTTP loopback registries.
func copyTag(t *testing.T, src, dst string) {
	t.Helper()
	s, err := name.ParseReference(src, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	d, err := name.ParseReference(dst, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(s)
	if err != nil {
		t.Fatalf("reading %s: %v", src, err)
	}
	if err := remote.Write(d, img); err != nil {
		t.Fatalf("writing %s: %v", dst, err)
	}
}

func sigTag(ref string) string {
	repo, digest, _ := strings.Cut(ref, "@")
	return repo + ":" + airgap.SignatureTag(digest)
}

// TestSignedMirror: the plan's images signed with cosign are verified and
// mirrored with their signatures to a second registry, where the second hop
// (the source registry stopped, the mirror reached through registries.conf)
// verifies them again, as cosign does; a build with the same key writes a
// device policy that containers/image loads and that accepts the images.
func TestSignedMirror(t *testing.T) {
	t.Parallel() // see parallelE2E
	bin := e2eBinary(t)
	s := newSigner(t)
	priv, pub := s.keyPair(t, "release")
	src := testutil.StartRegistry(t)
	rel := pushRelease(t, &testutil.Pusher{Host: src.Host}, false)
	dst := testutil.StartRegistry(t)
	work := t.TempDir()
	out := filepath.Join(work, "out")
	e := newUserEnv(t)
	e.must(t, bin, "build", "--profile", "full", "--arch", "x86_64", "--release-dir", rel, "--verify-key", pub,
		"--mirror-registry", dst.Host+"/edge", "--output", out)
	lock := filepath.Join(out, "compose.lock.json")
	refs := nonEmptyLines(string(mustReadFile(t, filepath.Join(out, "images.txt"))))
	if len(refs) != 9 {
		t.Fatalf("images.txt has %d images, want 9", len(refs))
	}

	// Unsigned: refused, nothing mirrored.
	unsignedTo := filepath.Join(work, "unsigned")
	r := e.exec(t, "", bin, "mirror", "--lock", lock, "--verify-key", pub, "--quiet", "--to", "oci:"+unsignedTo)
	if r.code != 1 || !strings.Contains(r.stderr, "refused by the trust policy") || !strings.Contains(r.stderr, "nothing was mirrored") {
		t.Fatalf("mirror of unsigned images: exit %d, stderr %s", r.code, r.stderr)
	}
	if _, err := os.Stat(unsignedTo); !os.IsNotExist(err) {
		t.Errorf("a refused mirror created %s", unsignedTo)
	}

	s.sign(t, priv, refs...)
	for _, ref := range refs {
		if !s.verify(t, pub, ref) {
			t.Fatalf("cosign verify refuses %s, which it signed", ref)
		}
	}

	// Bad input: one line naming the file, exit non-zero, nothing mirrored.
	badPolicy := filepath.Join(work, "bad-policy.json")
	writeFileMode(t, badPolicy, []byte(`{"default": [{"type": "sigstoreSigned"`), 0o644)
	notKey := filepath.Join(work, "not-a-key.pub")
	writeFileMode(t, notKey, []byte("ssh-ed25519 AAAA not a PEM key\n"), 0o644)
	rejectAll := filepath.Join(work, "reject.json")
	writeFileMode(t, rejectAll, []byte(`{"default": [{"type": "reject"}]}`), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"malformed policy", []string{"--policy", badPolicy}, "policy " + badPolicy + ": invalid containers policy"},
		{"key that is no key", []string{"--verify-key", notKey}, "key " + notKey + ": not a PEM public key"},
		{"policy that rejects everything", []string{"--policy", rejectAll}, "rule default (reject)"},
		{"policy and keys", []string{"--policy", rejectAll, "--verify-key", pub}, "give one"},
	} {
		to := filepath.Join(work, "bad", strings.ReplaceAll(tc.name, " ", "-"))
		r := e.exec(t, "", bin, append([]string{"mirror", "--lock", lock, "--quiet", "--to", "oci:" + to}, tc.args...)...)
		lines := nonEmptyLines(r.stderr)
		if r.code == 0 || len(lines) == 0 || !strings.Contains(lines[len(lines)-1], tc.want) || r.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q: want an error line with %q", tc.name, r.code, r.stdout, r.stderr, tc.want)
		}
		if tc.name != "policy that rejects everything" && len(lines) != 1 {
			t.Errorf("%s: %d lines on stderr, want 1: %q", tc.name, len(lines), r.stderr)
		}
		if _, err := os.Stat(to); !os.IsNotExist(err) {
			t.Errorf("%s: mirror created %s", tc.name, to)
		}
	}

	// Hop 1: verified, then copied with the signatures.
	r = e.exec(t, "", bin, "mirror", "--lock", lock, "--verify-key", pub, "--quiet", "--to", "docker://"+dst.Host+"/edge")
	summary := regexp.MustCompile(`^mirrored 9 images and 9 signatures \(\d+ blobs, \d+ manifests\) to docker://`)
	if r.code != 0 || !summary.MatchString(r.stdout) {
		t.Fatalf("verified mirror: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	t.Logf("hop 1: %s", strings.TrimSpace(r.stdout))

	// Hop 2: the source is gone; registries.conf sends its images to the
	// mirror, where the signatures were copied.
	src.Stop()
	conf := filepath.Join(work, "registries.conf")
	writeFileMode(t, conf, []byte("[[registry]]\nlocation = \""+src.Host+"\"\n[[registry.mirror]]\nlocation = \""+dst.Host+"/edge\"\n"), 0o644)
	layout := filepath.Join(work, "layout")
	r = e.exec(t, "", bin, "mirror", "--lock", lock, "--verify-key", pub, "--registries-conf", conf, "--quiet", "--to", "oci:"+layout)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "mirrored 9 images and 9 signatures") {
		t.Fatalf("second hop: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	t.Logf("hop 2: %s", strings.TrimSpace(r.stdout))
	for _, ref := range refs {
		moved := dst.Host + "/edge" + strings.TrimPrefix(ref, src.Host)
		if !s.verify(t, pub, moved) {
			t.Errorf("cosign verify refuses the mirrored %s", moved)
		}
	}
	// The layout names the signatures, so mirror --from carries them on.
	names, err := airgap.LayoutImages(airgap.Target{Transport: airgap.TransportOCI, Path: layout}, registryclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if imgs, sigs := countSignatures(names); imgs != 9 || sigs != 9 {
		t.Errorf("layout holds %d images and %d signatures, want 9 and 9", imgs, sigs)
	}

	// The device's policy, as build wrote it, read by containers/image,
	// with the key paths mapped into the output; the device's registries.d
	// is what finds the signatures (in the mirror, as a device would).
	files := filepath.Join(out, "files")
	policy := strings.ReplaceAll(string(mustReadFile(t, filepath.Join(files, trust.PolicyPath))), `"`+trust.SigstoreKeyDir, `"`+filepath.Join(files, trust.SigstoreKeyDir))
	policyFile := filepath.Join(work, "device-policy.json")
	writeFileMode(t, policyFile, []byte(policy), 0o644)
	policyTrust, err := sigverify.LoadPolicy(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	policyTrust.RegistriesDir = filepath.Join(files, filepath.Dir(trust.RegistriesDPath))
	rc := registryclient.Options{RegistriesConf: conf}
	results, err := sigverify.Verify(context.Background(), policyTrust, refs, rc)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range results {
		if res.Err != nil {
			t.Errorf("the device policy refuses %s: %v", res.Ref, res.Err)
		}
	}
	// Without the registries.d entry, no signature is found: the entry is
	// what makes the device look for attachments.
	policyTrust.RegistriesDir = t.TempDir()
	results, err = sigverify.Verify(context.Background(), policyTrust, refs[:1], rc)
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Err == nil {
		t.Errorf("the device policy accepted %s without sigstore attachments configured", refs[0])
	}
	// The lock lists the device's trust files.
	lockData := string(mustReadFile(t, lock))
	for _, p := range []string{trust.PolicyPath, trust.SigstoreKeyDir + "/release.pub", trust.RegistriesDPath} {
		if !strings.Contains(lockData, `"`+p+`"`) {
			t.Errorf("the lock does not list %s", p)
		}
	}
}

// TestSignatureRefusals: a tampered image, an unsigned one, one signed by
// another key and one signed for another repository are each refused by
// release verify and mirror, naming the image and the rule; our verdicts
// are compared with cosign verify's.
func TestSignatureRefusals(t *testing.T) {
	t.Parallel() // see parallelE2E
	bin := e2eBinary(t)
	s := newSigner(t)
	priv, pub := s.keyPair(t, "release")
	otherPriv, _ := s.keyPair(t, "other")
	reg := testutil.StartRegistry(t)
	p := &testutil.Pusher{Host: reg.Host}
	push := func(repo string, seed uint64) string {
		ref, err := p.PushImage(repo, "amd64", []testutil.Layer{testutil.NewLayer(seed, 4096)})
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	good := push("org/good", 1)
	unsigned := push("org/unsigned", 2)
	otherKey := push("org/otherkey", 3)
	s.sign(t, otherPriv, otherKey)
	// Signed for another repository: the same image and signature, copied
	// from org/signed-elsewhere to org/moved (below).
	elsewhere := push("org/signed-elsewhere", 5)
	s.sign(t, priv, good, elsewhere)
	// Tampered: another image served with the good image's signature.
	tampered := push("org/good", 4)
	copyTag(t, sigTag(good), sigTag(tampered))
	moved := reg.Host + "/org/moved@" + strings.SplitN(elsewhere, "@", 2)[1]
	copyTag(t, elsewhere, moved)
	copyTag(t, sigTag(elsewhere), sigTag(moved))

	cases := []struct {
		name, ref string
		ok        bool
		// cosign checks the key and the digest claim, not the repository
		// the signature names; the policy's signedIdentity (matchRepository) does.
		cosignOK bool
	}{
		{"signed", good, true, true},
		{"unsigned", unsigned, false, false},
		{"other key", otherKey, false, false},
		{"tampered", tampered, false, false},
		{"other repository", moved, false, true},
	}
	images := map[string]string{}
	for _, tc := range cases {
		images[strings.ReplaceAll(tc.name, " ", "-")] = tc.ref
		if got := s.verify(t, pub, tc.ref); got != tc.cosignOK {
			t.Errorf("%s: cosign verify = %v, want %v", tc.name, got, tc.cosignOK)
		}
	}
	dir := t.TempDir()
	data, _ := json.Marshal(map[string]any{"release": map[string]string{"base": "5.0.0"}, "images": images})
	writeFileMode(t, filepath.Join(dir, "release-x86_64.json"), data, 0o644)

	e := newUserEnv(t)
	r := e.exec(t, "", bin, "release", "verify", dir, "--verify-key", pub, "--output", "json")
	if r.code != 1 {
		t.Fatalf("release verify: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	var got verifyJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	byRef := map[string]rebase.Check{}
	for _, c := range got.Images {
		byRef[c.Ref] = c
	}
	for _, tc := range cases {
		c := byRef[tc.ref]
		if c.OK != tc.ok {
			t.Errorf("%s: release verify ok = %v, want %v (%s)", tc.name, c.OK, tc.ok, c.Message)
			continue
		}
		if !tc.ok && (c.Reason != rebase.ReasonSignature || !strings.Contains(c.Message, `rule docker "`+strings.SplitN(tc.ref, "@", 2)[0]+`" (sigstoreSigned)`)) {
			t.Errorf("%s: reason %s, message %q: want signature, naming the rule", tc.name, c.Reason, c.Message)
		}
		t.Logf("%s: %v %s", tc.name, c.OK, c.Message)
	}
}
