package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/microshift-compose/microshift-compose/internal/testutil"
)

// cosignBlob is cosign's verdict on a blob signature: cosign verify-blob
// with the key and no transparency log (the Rekor key variable stops
// cosign fetching its trusted root from the network; it is not used).
func (s *signer) cosignBlob(t *testing.T, pub, sig, blob string) procResult {
	t.Helper()
	s.env.set("SIGSTORE_REKOR_PUBLIC_KEY", pub)
	defer s.env.unset("SIGSTORE_REKOR_PUBLIC_KEY")
	return s.env.exec(t, "", s.bin, "verify-blob", "--key", pub, "--signature", sig, "--insecure-ignore-tlog", blob)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	writeFileMode(t, to, mustReadFile(t, from), 0o644)
}

// TestSignedBundle: mirror --to oci-archive --sign-key signs the archive
// (FILE.sig) or a split archive's list (FILE.parts.json.sig) as cosign
// sign-blob does, and cosign verify-blob accepts it; mirror --from
// --verify-key accepts it, and refuses an unsigned bundle, one signed by
// another key and one changed after signing in one line, with the
// destination untouched.
func TestSignedBundle(t *testing.T) {
	t.Parallel() // see parallelE2E
	bin := e2eBinary(t)
	s := newSigner(t)
	priv, pub := s.keyPair(t, "bundle")
	_, otherPub := s.keyPair(t, "other")
	src := testutil.StartRegistry(t)
	p := &testutil.Pusher{Host: src.Host}
	rel := pushRelease(t, p, false)
	// An OS image large enough to split the archive in parts of 1 MiB.
	osImage, err := p.PushImage("example/microshift-os", "amd64", []testutil.Layer{testutil.NewLayer(500, 1536<<10)})
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	out := filepath.Join(work, "out")
	e := newUserEnv(t)
	e.set("COSIGN_PASSWORD", "test-password")
	e.must(t, bin, "build", "--profile", "full", "--arch", "x86_64", "--release-dir", rel, "--output", out)
	lock := filepath.Join(out, "compose.lock.json")

	// Signed as it is written.
	bundle := filepath.Join(work, "bundle.tar")
	e.must(t, bin, "mirror", "--lock", lock, "--sign-key", priv, "--quiet", "--to", "oci-archive:"+bundle)
	r := s.cosignBlob(t, pub, bundle+".sig", bundle)
	if r.code != 0 || !strings.Contains(r.stderr, "Verified OK") {
		t.Fatalf("cosign verify-blob refuses bundle.tar.sig: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("cosign verify-blob on bundle.tar: %s", lastLine(r.stderr))
	if r := s.cosignBlob(t, otherPub, bundle+".sig", bundle); r.code == 0 {
		t.Errorf("cosign verify-blob accepts bundle.tar.sig with another key")
	}

	// Accepted: with the key, or among other keys.
	accepted := filepath.Join(work, "accepted")
	for _, keys := range [][]string{{"--verify-key", pub}, {"--verify-key", otherPub, "--verify-key", pub}} {
		r = e.exec(t, "", bin, append([]string{"mirror", "--from", "oci-archive:" + bundle, "--quiet", "--to", "oci:" + accepted}, keys...)...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "mirrored 9 images ") || r.stderr != "verified oci-archive:"+bundle+": bundle.tar is signed by "+pub+"\n" {
			t.Fatalf("mirror --from a signed bundle %v: exit %d, stdout %q, stderr %q", keys, r.code, r.stdout, r.stderr)
		}
	}
	t.Logf("accepted: %s", strings.TrimSpace(r.stderr))
	// Verified, then packed straight into another signed archive.
	resigned := filepath.Join(work, "resigned.tar")
	e.must(t, bin, "mirror", "--from", "oci-archive:"+bundle, "--verify-key", pub, "--sign-key", priv, "--quiet", "--to", "oci-archive:"+resigned)
	if r := s.cosignBlob(t, pub, resigned+".sig", resigned); r.code != 0 {
		t.Errorf("cosign verify-blob refuses an archive packed from another: exit %d\n%s", r.code, r.stderr)
	}

	// Refused: one line naming the file and why, nothing written to an
	// existing destination or a new one.
	unsigned := filepath.Join(work, "unsigned.tar")
	copyFile(t, bundle, unsigned)
	altered := filepath.Join(work, "altered.tar")
	copyFile(t, bundle, altered)
	copyFile(t, bundle+".sig", altered+".sig")
	data := mustReadFile(t, altered)
	data[len(data)/2] ^= 0x01
	writeFileMode(t, altered, data, 0o644)
	badSig := filepath.Join(work, "badsig.tar")
	copyFile(t, bundle, badSig)
	writeFileMode(t, badSig+".sig", []byte("not base64!\n"), 0o644)
	for _, tc := range []struct {
		name string
		from string
		keys []string
		want string
	}{
		{"unsigned", "oci-archive:" + unsigned, []string{pub},
			"error: oci-archive:" + unsigned + ": not signed: no unsigned.tar.sig beside it (mirror --to oci-archive:FILE --sign-key KEY writes it); nothing was mirrored"},
		{"another key", "oci-archive:" + bundle, []string{otherPub},
			"error: oci-archive:" + bundle + ": bundle.tar.sig: the signature does not verify with the public key " + otherPub + ": it was signed with another key, or the archive changed after signing; nothing was mirrored"},
		{"altered", "oci-archive:" + altered, []string{pub, otherPub},
			"error: oci-archive:" + altered + ": altered.tar.sig: the signature does not verify with any of the 2 public keys: it was signed with another key, or the archive changed after signing; nothing was mirrored"},
		{"signature not base64", "oci-archive:" + badSig, []string{pub},
			"error: " + badSig + ".sig: not a base64 signature (cosign sign-blob's format): illegal base64 data at input byte 3; nothing was mirrored"},
		{"private key to verify", "oci-archive:" + bundle, []string{priv},
			"error: public key " + priv + " holds a private key: verifying takes the public key (cosign.pub), never the private one"},
		{"a layout directory", "oci:" + accepted, []string{pub},
			"error: oci:" + accepted + " is a layout directory: only an oci-archive:FILE carries a bundle signature (FILE.sig, written by mirror --to oci-archive:FILE --sign-key); nothing was mirrored"},
	} {
		var last string
		for _, to := range []string{accepted, filepath.Join(work, "new-"+strings.ReplaceAll(tc.name, " ", "-"))} {
			before := snapshot(t, accepted)
			args := []string{"mirror", "--from", tc.from, "--quiet", "--to", "oci:" + to}
			for _, k := range tc.keys {
				args = append(args, "--verify-key", k)
			}
			r := e.exec(t, "", bin, args...)
			last = strings.TrimSpace(r.stderr)
			if r.code != exitError || r.stdout != "" || r.stderr != tc.want+"\n" {
				t.Errorf("%s: exit %d, stdout %q, stderr %q\nwant %q", tc.name, r.code, r.stdout, r.stderr, tc.want)
			}
			if d := diffSnapshots(before, snapshot(t, accepted)); d != "" {
				t.Errorf("%s: the refused mirror changed the destination: %s", tc.name, d)
			}
			if to != accepted {
				if _, err := os.Stat(to); !os.IsNotExist(err) {
					t.Errorf("%s: the refused mirror created %s", tc.name, to)
				}
			}
		}
		t.Logf("%s: %s", tc.name, last)
	}
	if r := s.cosignBlob(t, pub, altered+".sig", altered); r.code == 0 {
		t.Errorf("cosign verify-blob accepts the altered archive")
	} else {
		t.Logf("cosign verify-blob on the altered archive: %s", lastLine(r.stderr))
	}

	// Bad flags and keys: one line, nothing written.
	wrongPass := newUserEnv(t)
	wrongPass.set("COSIGN_PASSWORD", "not-the-password")
	for _, tc := range []struct {
		name string
		env  *userEnv
		args []string
		want string
		code int
	}{
		{"--sign-key to a layout", e, []string{"--lock", lock, "--sign-key", priv, "--to", "oci:" + filepath.Join(work, "bad")},
			"error: --sign-key signs an oci-archive:FILE bundle, and --to is oci:" + filepath.Join(work, "bad") + ": sign images with cosign sign", exitUsage},
		{"public key to sign", e, []string{"--lock", lock, "--sign-key", pub, "--to", "oci-archive:" + filepath.Join(work, "bad.tar")},
			"error: signing key " + pub + " holds a public key: signing takes the private key (cosign.key), its public key (cosign.pub) verifies", exitError},
		{"wrong password", wrongPass, []string{"--lock", lock, "--sign-key", priv, "--to", "oci-archive:" + filepath.Join(work, "bad.tar")},
			"error: signing key " + priv + ": wrong password: COSIGN_PASSWORD does not decrypt it", exitError},
		{"--policy with --from", e, []string{"--from", "oci-archive:" + bundle, "--policy", filepath.Join(work, "policy.json"), "--to", "oci:" + filepath.Join(work, "bad")},
			"error: --policy and the certificate identity flags check signatures in the images' registries, and --from reads a layout: verify when mirroring from the registries (the signatures are copied into the layout with the images), or load the layout into a registry and verify there; --verify-key with --from checks the bundle's signature", exitUsage},
	} {
		r := tc.env.exec(t, "", bin, append([]string{"mirror", "--quiet"}, tc.args...)...)
		if r.code != tc.code || r.stdout != "" || !strings.HasPrefix(r.stderr, tc.want+"\n") || len(nonEmptyLines(r.stderr)) > 2 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q\nwant %q", tc.name, r.code, r.stdout, r.stderr, tc.want)
		}
		if left := leftovers(t, work); len(left) > 0 {
			t.Errorf("%s: left %v", tc.name, left)
		}
		for _, p := range []string{"bad", "bad.tar"} {
			if _, err := os.Stat(filepath.Join(work, p)); !os.IsNotExist(err) {
				t.Errorf("%s: wrote %s", tc.name, p)
			}
		}
	}

	// A split archive: its list is signed, which holds every part's
	// sha256. docs/day2.md's commands, the images signed for its --verify-key.
	relPriv, relPub := s.keyPair(t, "release")
	s.sign(t, relPriv, append(nonEmptyLines(string(mustReadFile(t, filepath.Join(out, "images.txt")))), osImage)...)
	dst := testutil.StartRegistry(t)
	blocks := docBlocks(t, "docs/day2.md", "## Day 2 across the air gap: bundles, parts, the OS image, prune")
	var block []string
	for _, b := range blocks {
		if strings.Contains(strings.Join(b, "\n"), "cosign verify-blob") {
			block = b
		}
	}
	names := strings.NewReplacer("day2/compose.lock.json", lock, "registry.example.com/microshift-os@sha256:…", osImage,
		"release.pub", relPub, "4GiB", "1MiB", "bundle.key", priv, "bundle.pub", pub, "mirror.example.com:5000", dst.Host)
	split := filepath.Join(work, "day2.tar")
	list := split + ".parts.json"
	r = e.exec(t, work, bin, append([]string{"mirror", "--quiet", "--lock"}, docCommand(t, block, "microshift-compose mirror --lock ", names)...)...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "mirrored 10 images and 10 signatures ") {
		t.Fatalf("docs/day2.md's signed bundle: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(split + ".002"); err != nil {
		t.Errorf("the split archive has one part (%v): the test wants several", err)
	}
	if _, err := os.Stat(split + ".sig"); !os.IsNotExist(err) {
		t.Errorf("a split archive has a day2.tar.sig (%v): its list is what is signed", err)
	}
	cosignArgs := docCommand(t, block, "cosign ", names)
	s.env.set("SIGSTORE_REKOR_PUBLIC_KEY", pub)
	r = s.env.exec(t, work, s.bin, cosignArgs...)
	s.env.unset("SIGSTORE_REKOR_PUBLIC_KEY")
	if r.code != 0 || !strings.Contains(r.stderr, "Verified OK") {
		t.Fatalf("docs/day2.md's cosign verify-blob refuses day2.tar.parts.json.sig: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("cosign verify-blob on day2.tar.parts.json: %s", lastLine(r.stderr))
	farSide := docCommand(t, block, "microshift-compose mirror --from ", names)
	r = e.exec(t, work, bin, append([]string{"mirror", "--from"}, farSide...)...)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "mirrored 10 images and 10 signatures ") || !strings.HasPrefix(r.stderr, "verified oci-archive:day2.tar.001: day2.tar.parts.json is signed by "+pub+"\n") {
		t.Errorf("docs/day2.md's far side: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	t.Logf("far side: %s", nonEmptyLines(r.stderr)[0])
	for _, from := range []string{split, list} {
		r = e.exec(t, "", bin, "mirror", "--from", "oci-archive:"+from, "--verify-key", pub, "--quiet", "--to", "oci:"+filepath.Join(work, "from-split"))
		if r.code != 0 || !strings.HasPrefix(r.stdout, "mirrored 10 images ") || r.stderr != "verified oci-archive:"+from+": day2.tar.parts.json is signed by "+pub+"\n" {
			t.Errorf("mirror --from oci-archive:%s: exit %d, stdout %q, stderr %q", from, r.code, r.stdout, r.stderr)
		}
	}
	// One digit of a part's sha256 in the list changed.
	listData := mustReadFile(t, list)
	m := regexp.MustCompile(`"sha256": "([0-9a-f])`).FindSubmatchIndex(listData)
	if m == nil {
		t.Fatalf("no sha256 in %s", listData)
	}
	if listData[m[2]] == '0' {
		listData[m[2]] = '1'
	} else {
		listData[m[2]] = '0'
	}
	writeFileMode(t, list, listData, 0o644)
	r = e.exec(t, "", bin, "mirror", "--from", "oci-archive:"+split, "--verify-key", pub, "--quiet", "--to", "oci:"+filepath.Join(work, "from-altered-split"))
	want := "error: oci-archive:" + split + ": day2.tar.parts.json.sig: the signature does not verify with the public key " + pub + ": it was signed with another key, or its list of parts changed after signing; nothing was mirrored\n"
	if r.code != exitError || r.stderr != want {
		t.Errorf("altered split list: exit %d, stderr %q\nwant %q", r.code, r.stderr, want)
	}
	t.Logf("altered split list: %s", strings.TrimSpace(r.stderr))
	if _, err := os.Stat(filepath.Join(work, "from-altered-split")); !os.IsNotExist(err) {
		t.Errorf("a refused split archive wrote its destination")
	}

	// Written again without --sign-key, the archive keeps no stale
	// signature: it is unsigned, not "altered".
	e.must(t, bin, "mirror", "--lock", lock, "--quiet", "--to", "oci-archive:"+bundle)
	if _, err := os.Stat(bundle + ".sig"); !os.IsNotExist(err) {
		t.Errorf("an unsigned rewrite kept bundle.tar.sig (%v)", err)
	}
}
