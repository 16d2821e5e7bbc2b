package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/sigverify"
	"github.com/microshift-compose/microshift-compose/internal/testutil"
	"github.com/microshift-compose/microshift-compose/releases/rebase"
	"github.com/microshift-compose/microshift-compose/render/trust"
)

// The identities the tests sign as.
const (
	testIssuer   = "https://issuer.test.example"
	testIdentity = "release@test.example"
)

// attachCertSignature signs ref with a certificate of the test sigstore as
// c says (logged in its Rekor at logged, unless zero) and attaches the
// signature with cosign: `cosign generate` writes the payload, `cosign
// attach signature` the sigstore attachment containers/image reads.
func (s *signer) attachCertSignature(t *testing.T, ss *testutil.TestSigstore, name, ref string, c testutil.CertSpec, logged time.Time) {
	t.Helper()
	payload := s.env.must(t, s.bin, "generate", "--allow-http-registry", "--allow-insecure-registry", ref)
	f := ss.Sign(t, name, []byte(payload), c, logged)
	args := []string{"attach", "signature", "--allow-http-registry", "--allow-insecure-registry",
		"--payload", f.Payload, "--signature", f.Signature, "--certificate", f.Certificate, "--certificate-chain", f.Chain}
	if f.Bundle != "" {
		args = append(args, "--rekor-response", f.Bundle)
	}
	s.env.must(t, s.bin, append(args, ref)...)
}

// cosignVerifyIdentity is cosign's verdict on a keyless signature of ref,
// offline: the test CA as Fulcio's root, the test Rekor key, the bundle
// attached with the signature, no SCT (the test CA runs no CT log).
func (s *signer) cosignVerifyIdentity(t *testing.T, ss *testutil.TestSigstore, ref, identity, issuer string) procResult {
	t.Helper()
	s.env.set("SIGSTORE_ROOT_FILE", ss.CAPath)
	s.env.set("SIGSTORE_REKOR_PUBLIC_KEY", ss.RekorKeyPath)
	defer s.env.unset("SIGSTORE_ROOT_FILE")
	defer s.env.unset("SIGSTORE_REKOR_PUBLIC_KEY")
	return s.env.exec(t, "", s.bin, "verify", "--offline", "--insecure-ignore-sct", "--allow-http-registry", "--allow-insecure-registry",
		"--certificate-identity", identity, "--certificate-oidc-issuer", issuer, ref)
}

// TestIdentityRefusals: images signed keyless by a test CA acting as
// Fulcio (with a test Rekor key) and by the same CA as a PKI root, for the
// right identity, another identity, another issuer, with an expired
// certificate, and unsigned: release verify accepts the right ones and
// refuses each other in one line naming the image, the rule and why;
// cosign's verdicts on the keyless ones are the same.
func TestIdentityRefusals(t *testing.T) {
	t.Parallel() // see parallelE2E
	bin := e2eBinary(t)
	s := newSigner(t)
	ss := testutil.NewTestSigstore(t)
	reg := testutil.StartRegistry(t)
	p := &testutil.Pusher{Host: reg.Host}
	now := time.Now()
	seed := uint64(100)
	push := func(repo string) string {
		seed++
		ref, err := p.PushImage(repo, "amd64", []testutil.Layer{testutil.NewLayer(seed, 4096)})
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	right := testutil.CertSpec{Email: testIdentity, Issuer: testIssuer}
	cases := []struct {
		name string
		// keyless: a Fulcio certificate logged in Rekor; else a PKI one.
		keyless bool
		cert    *testutil.CertSpec // nil: unsigned
		logged  time.Time
		ok      bool
		why     string
	}{
		{"keyless", true, &right, now, true, ""},
		{"keyless-other-identity", true, &testutil.CertSpec{Email: "intruder@test.example", Issuer: testIssuer}, now, false, `Required email "release@test.example" not found`},
		{"keyless-other-issuer", true, &testutil.CertSpec{Email: testIdentity, Issuer: "https://other-issuer.example"}, now, false, `Unexpected Fulcio OIDC issuer "https://other-issuer.example"`},
		// Logged an hour after its ten minutes.
		{"keyless-expired", true, &testutil.CertSpec{Email: testIdentity, Issuer: testIssuer, NotBefore: now.Add(-2 * time.Hour)}, now.Add(-time.Hour), false, "certificate has expired or is not yet valid"},
		{"keyless-unlogged", true, &right, time.Time{}, false, "missing dev.sigstore.cosign/bundle annotation"},
		{"keyless-unsigned", true, nil, time.Time{}, false, "A signature was required, but no signature exists"},
		{"pki", false, &testutil.CertSpec{Email: testIdentity}, time.Time{}, true, ""},
		{"pki-other-identity", false, &testutil.CertSpec{Email: "intruder@test.example"}, time.Time{}, false, `Required email "release@test.example" not found`},
		{"pki-expired", false, &testutil.CertSpec{Email: testIdentity, NotBefore: now.Add(-48 * time.Hour), NotAfter: now.Add(-24 * time.Hour)}, time.Time{}, false, "certificate has expired or is not yet valid"},
	}
	keyless, pki := map[string]string{}, map[string]string{}
	refs := map[string]string{}
	for _, tc := range cases {
		ref := push("org/" + tc.name)
		refs[tc.name] = ref
		if tc.cert != nil {
			s.attachCertSignature(t, ss, tc.name, ref, *tc.cert, tc.logged)
		}
		if tc.keyless {
			keyless[tc.name] = ref
		} else {
			pki[tc.name] = ref
		}
	}
	release := func(images map[string]string) string {
		dir := t.TempDir()
		data, _ := json.Marshal(map[string]any{"release": map[string]string{"base": "5.0.0"}, "images": images})
		writeFileMode(t, filepath.Join(dir, "release-x86_64.json"), data, 0o644)
		return dir
	}
	keylessFlags := []string{"--certificate-identity", testIdentity, "--certificate-oidc-issuer", testIssuer, "--fulcio-ca", ss.CAPath, "--rekor-key", ss.RekorKeyPath}
	pkiFlags := []string{"--certificate-identity", testIdentity, "--ca-roots", ss.CAPath}

	e := newUserEnv(t)
	byRef := map[string]rebase.Check{}
	for _, run := range []struct {
		dir   string
		flags []string
	}{{release(keyless), keylessFlags}, {release(pki), pkiFlags}} {
		r := e.exec(t, "", bin, append([]string{"release", "verify", run.dir, "--output", "json"}, run.flags...)...)
		if r.code != 1 {
			t.Fatalf("release verify %v: exit %d, want 1\n%s%s", run.flags, r.code, r.stdout, r.stderr)
		}
		var got verifyJSON
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatal(err)
		}
		for _, c := range got.Images {
			byRef[c.Ref] = c
		}
	}
	for _, tc := range cases {
		c, ok := byRef[refs[tc.name]]
		switch {
		case !ok:
			t.Errorf("%s: release verify did not check %s", tc.name, refs[tc.name])
		case c.OK != tc.ok:
			t.Errorf("%s: release verify ok = %v, want %v (%s)", tc.name, c.OK, tc.ok, c.Message)
		case !tc.ok && (c.Reason != rebase.ReasonSignature || strings.Contains(c.Message, "\n") ||
			!strings.Contains(c.Message, `rule docker "`+strings.SplitN(refs[tc.name], "@", 2)[0]+`" (sigstoreSigned)`) || !strings.Contains(c.Message, tc.why)):
			t.Errorf("%s: reason %s, message %q: want one line naming the rule and %q", tc.name, c.Reason, c.Message, tc.why)
		default:
			t.Logf("release verify, %s: ok=%v %s", tc.name, c.OK, c.Message)
		}
		if tc.keyless && tc.cert != nil {
			r := s.cosignVerifyIdentity(t, ss, refs[tc.name], testIdentity, testIssuer)
			if (r.code == 0) != tc.ok {
				t.Errorf("%s: cosign verify exit %d, want ok=%v\n%s", tc.name, r.code, tc.ok, r.stderr)
			}
			t.Logf("cosign verify, %s: exit %d %s", tc.name, r.code, lastLine(r.stderr))
		}
	}
}

// TestIdentityMirror: a release signed keyless by the test Fulcio is
// mirrored when the identity flags name its signer, refused in one line
// with nothing written when they name another identity or issuer or a
// Rekor key that did not sign; build with the same flags writes a device
// policy that names the CA and Rekor key it places in
// /etc/containers/sigstore, and that policy, read by containers/image,
// accepts the images; with --ca-roots (PKI) the same release, signed by
// PKI certificates too, is mirrored.
func TestIdentityMirror(t *testing.T) {
	t.Parallel() // see parallelE2E
	bin := e2eBinary(t)
	s := newSigner(t)
	ss := testutil.NewTestSigstore(t)
	src := testutil.StartRegistry(t)
	rel := pushRelease(t, &testutil.Pusher{Host: src.Host}, false)
	work := t.TempDir()
	out := filepath.Join(work, "out")
	keylessFlags := []string{"--certificate-identity", testIdentity, "--certificate-oidc-issuer", testIssuer, "--fulcio-ca", ss.CAPath, "--rekor-key", ss.RekorKeyPath}
	e := newUserEnv(t)
	e.must(t, bin, append([]string{"build", "--profile", "full", "--arch", "x86_64", "--release-dir", rel, "--output", out}, keylessFlags...)...)
	lock := filepath.Join(out, "compose.lock.json")
	refs := nonEmptyLines(string(mustReadFile(t, filepath.Join(out, "images.txt"))))
	for i, ref := range refs {
		s.attachCertSignature(t, ss, "keyless-"+string(rune('a'+i)), ref, testutil.CertSpec{Email: testIdentity, Issuer: testIssuer}, time.Now())
		s.attachCertSignature(t, ss, "pki-"+string(rune('a'+i)), ref, testutil.CertSpec{Email: testIdentity}, time.Time{})
	}

	otherRekor := filepath.Join(work, "other-rekor.pub")
	writeFileMode(t, otherRekor, mustReadFile(t, testutil.NewTestSigstore(t).RekorKeyPath), 0o644)
	with := func(flags []string, k, v string) []string {
		out := append([]string(nil), flags...)
		for i := range out {
			if out[i] == k {
				out[i+1] = v
			}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"other identity", with(keylessFlags, "--certificate-identity", "ops@test.example"), `Required email "ops@test.example" not found`},
		{"other issuer", with(keylessFlags, "--certificate-oidc-issuer", "https://other-issuer.example"), `Unexpected Fulcio OIDC issuer "` + testIssuer + `"`},
		{"other rekor key", with(keylessFlags, "--rekor-key", otherRekor), "cryptographic signature verification of Rekor SET failed"},
		{"pki other identity", []string{"--certificate-identity", "ops@test.example", "--ca-roots", ss.CAPath}, `Required email "ops@test.example" not found`},
	} {
		to := filepath.Join(work, "refused", strings.ReplaceAll(tc.name, " ", "-"))
		r := e.exec(t, "", bin, append([]string{"mirror", "--lock", lock, "--quiet", "--to", "oci:" + to}, tc.flags...)...)
		lines := nonEmptyLines(r.stderr)
		if r.code != 1 || r.stdout != "" || len(lines) == 0 || !strings.Contains(lines[len(lines)-1], tc.want) || !strings.Contains(lines[len(lines)-1], "nothing was mirrored") {
			t.Errorf("mirror, %s: exit %d, stdout %q, stderr %q: want a refusal with %q", tc.name, r.code, r.stdout, r.stderr, tc.want)
		}
		if _, err := os.Stat(to); !os.IsNotExist(err) {
			t.Errorf("mirror, %s: a refused mirror created %s", tc.name, to)
		}
		if len(lines) > 0 {
			t.Logf("mirror, %s: %s", tc.name, lines[len(lines)-1])
		}
	}

	summary := regexp.MustCompile(`^mirrored 9 images and 9 signatures `)
	for name, flags := range map[string][]string{"keyless": keylessFlags, "pki": {"--certificate-identity", testIdentity, "--ca-roots", ss.CAPath}} {
		layout := filepath.Join(work, "layout-"+name)
		r := e.exec(t, "", bin, append([]string{"mirror", "--lock", lock, "--quiet", "--to", "oci:" + layout}, flags...)...)
		if r.code != 0 || !summary.MatchString(r.stdout) {
			t.Fatalf("mirror, %s identity: exit %d, stdout %q, stderr %s", name, r.code, r.stdout, r.stderr)
		}
		t.Logf("mirror, %s identity: %s", name, strings.TrimSpace(r.stdout))
	}

	// The device: the policy names the CA and the Rekor key where build
	// placed them; read by containers/image with those paths mapped into
	// the output, it accepts the signed images.
	files := filepath.Join(out, "files")
	policyData := string(mustReadFile(t, filepath.Join(files, trust.PolicyPath)))
	for _, want := range []string{`"caPath": "` + trust.SigstoreKeyDir + `/fulcio.pem"`, `"rekorPublicKeyPath": "` + trust.SigstoreKeyDir + `/rekor.pub"`, `"subjectEmail": "` + testIdentity + `"`, `"oidcIssuer": "` + testIssuer + `"`} {
		if !strings.Contains(policyData, want) {
			t.Errorf("the device policy lacks %s:\n%s", want, policyData)
		}
	}
	for placed, from := range map[string]string{"fulcio.pem": ss.CAPath, "rekor.pub": ss.RekorKeyPath} {
		if got := mustReadFile(t, filepath.Join(files, trust.SigstoreKeyDir, placed)); string(got) != string(mustReadFile(t, from)) {
			t.Errorf("%s/%s is not %s", trust.SigstoreKeyDir, placed, from)
		}
	}
	policyFile := filepath.Join(work, "device-policy.json")
	writeFileMode(t, policyFile, []byte(strings.ReplaceAll(policyData, `"`+trust.SigstoreKeyDir, `"`+filepath.Join(files, trust.SigstoreKeyDir))), 0o644)
	policyTrust, err := sigverify.LoadPolicy(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	policyTrust.RegistriesDir = filepath.Join(files, filepath.Dir(trust.RegistriesDPath))
	results, err := sigverify.Verify(context.Background(), policyTrust, refs, registryclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range results {
		if res.Err != nil {
			t.Errorf("the device policy refuses %s: %v", res.Ref, res.Err)
		}
	}
	lockData := string(mustReadFile(t, lock))
	for _, p := range []string{trust.PolicyPath, trust.SigstoreKeyDir + "/fulcio.pem", trust.SigstoreKeyDir + "/rekor.pub"} {
		if !strings.Contains(lockData, `"`+p+`"`) {
			t.Errorf("the lock does not list %s", p)
		}
	}
}

// TestIdentityBadInput: identity flags that do not go together, and files
// that are not what their flag wants, are each one line and a non-zero
// exit, with nothing written.
func TestIdentityBadInput(t *testing.T) {
	ss := testutil.NewTestSigstore(t)
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	writeFileMode(t, text, []byte("not a certificate\n"), 0o644)
	s := newSigner(t)
	priv, pub := s.keyPair(t, "cosign")
	// The named pipe is outside dir, which snapshot reads.
	fifo := filepath.Join(t.TempDir(), "pipe.pem")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	keyless := func(k, v string) []string {
		flags := []string{"--certificate-identity", testIdentity, "--certificate-oidc-issuer", testIssuer, "--fulcio-ca", ss.CAPath, "--rekor-key", ss.RekorKeyPath}
		for i := range flags {
			if flags[i] == k {
				if v == "" {
					return append(flags[:i:i], flags[i+2:]...)
				}
				flags[i+1] = v
			}
		}
		return flags
	}
	tests := []struct {
		name  string
		flags []string
		want  string
	}{
		{"no issuer", keyless("--certificate-oidc-issuer", ""), "--certificate-oidc-issuer is required with --fulcio-ca"},
		{"no rekor key", keyless("--rekor-key", ""), "--rekor-key is required with --fulcio-ca"},
		{"no identity", keyless("--certificate-identity", ""), "--certificate-identity is required"},
		{"URI identity", keyless("--certificate-identity", "https://github.com/org/repo/.github/workflows/release.yml@refs/heads/main"), "matches a Fulcio certificate's e-mail address only"},
		{"CA that is not a certificate", keyless("--fulcio-ca", text), "--fulcio-ca: certificates " + text + ": no PEM certificate"},
		{"CA that is a private key", keyless("--fulcio-ca", priv), "--fulcio-ca: certificates " + priv + ": holds a private key"},
		{"Rekor key that is a private key", keyless("--rekor-key", priv), "--rekor-key: key " + priv + ": "},
		{"Rekor key that is a certificate", keyless("--rekor-key", ss.CAPath), "--rekor-key: key " + ss.CAPath + ": "},
		{"CA that is a named pipe", keyless("--fulcio-ca", fifo), "--fulcio-ca: certificates " + fifo + " is not a regular file (a named pipe)"},
		{"PKI with a Rekor key", []string{"--certificate-identity", testIdentity, "--ca-roots", ss.CAPath, "--rekor-key", ss.RekorKeyPath}, "both say what issued the certificates"},
		{"identity and keys", append(keyless("", ""), "--verify-key", pub), "give"},
	}
	for _, tc := range tests {
		for _, cmd := range [][]string{
			{"build", "--profile", "full", "--arch", "x86_64", "--release", "4.19", "--output", out},
			{"release", "verify", "--release", "4.19"},
		} {
			t.Run(tc.name+"/"+cmd[0], func(t *testing.T) {
				before := snapshot(t, dir)
				stdout, stderr, code := runCLI(t, append(cmd, tc.flags...)...)
				if code == 0 || stdout != "" || len(nonEmptyLines(stderr)) != 1 || !strings.Contains(stderr, tc.want) {
					t.Errorf("exit %d, stdout %q, stderr %q; want one line with %q", code, stdout, stderr, tc.want)
				}
				if d := diffSnapshots(before, snapshot(t, dir)); d != "" {
					t.Errorf("something was written: %s", d)
				}
			})
		}
	}
}
