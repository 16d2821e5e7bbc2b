package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cosignAttestation is cosign's verdict on the statement of dir, with blob
// (a file of dir) as the artifact whose digest must be a subject: cosign
// verify-blob-attestation with the key and no transparency log. The Rekor
// key variable stops cosign fetching its trusted root from the network
// (it is not used: --insecure-ignore-tlog).
func (s *signer) cosignAttestation(t *testing.T, pub, dir, blob string) procResult {
	t.Helper()
	s.env.set("SIGSTORE_REKOR_PUBLIC_KEY", pub)
	defer s.env.unset("SIGSTORE_REKOR_PUBLIC_KEY")
	return s.env.exec(t, "", s.bin, "verify-blob-attestation", "--key", pub,
		"--signature", filepath.Join(dir, "compose.intoto.jsonl"),
		"--type", "slsaprovenance1", "--insecure-ignore-tlog", filepath.Join(dir, blob))
}

// statementPayload is the in-toto statement an envelope carries.
func statementPayload(t *testing.T, dir string) []byte {
	t.Helper()
	var env struct {
		Payload string `json:"payload"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "compose.intoto.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return payload
}

// TestSignedBuild: build --sign-key writes a statement that verify accepts
// and cosign verify-blob-attestation accepts; after one byte of a file
// changes, verify names that file and cosign refuses that file as a
// subject. The statement's payload is the same bytes for the same build.
func TestSignedBuild(t *testing.T) {
	s := newSigner(t)
	priv, pub := s.keyPair(t, "cosign")
	t.Setenv("COSIGN_PASSWORD", "test-password")
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	build := func(out string, extra ...string) {
		t.Helper()
		args := append([]string{"build", "--profile", "full", "--arch", "x86_64", "--release", "4.19", "--bootc", "--output", out, "--sign-key", priv, "--sbom-format", "spdx,cyclonedx"}, extra...)
		mustRun(t, args...)
	}
	build(out)
	for _, f := range []string{"compose.intoto.jsonl", "sbom.spdx.json", "sbom.cdx.json", "Containerfile"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("build --sign-key wrote no %s: %v", f, err)
		}
	}

	stdout, stderr, code := runCLI(t, "verify", out, "--key", pub)
	if code != 0 || !strings.HasPrefix(stdout, "verified "+out+": composition ") || stderr != "" {
		t.Fatalf("verify = %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	t.Logf("verify accepts the build: %s", strings.TrimSpace(stdout))
	var res struct {
		CompositionID string `json:"composition_id"`
		Files, Images int
	}
	jsonOut := mustRun(t, "verify", out, "--key", pub, "--output", "json")
	if err := json.Unmarshal([]byte(jsonOut), &res); err != nil || len(res.CompositionID) != 64 || res.Files < 6 || res.Images == 0 {
		t.Errorf("verify --output json = %s (%v)", jsonOut, err)
	}
	r := s.cosignAttestation(t, pub, out, "compose.lock.json")
	if r.code != 0 || !strings.Contains(r.stderr, "Verified OK") {
		t.Fatalf("cosign verify-blob-attestation refuses the statement: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("cosign on the statement: %s", lastLine(r.stderr))
	// Every file is a subject cosign finds.
	if r := s.cosignAttestation(t, pub, out, "sbom.cdx.json"); r.code != 0 {
		t.Errorf("cosign does not find sbom.cdx.json among the subjects: %s", r.stderr)
	}

	// Same build, same key: the same statement payload (the ECDSA
	// signature differs), and the same files otherwise.
	again := filepath.Join(dir, "again")
	build(again)
	if !bytes.Equal(statementPayload(t, out), statementPayload(t, again)) {
		t.Error("two builds of one composition signed different statements")
	}
	a, b := snapshot(t, out), snapshot(t, again)
	delete(a, "compose.intoto.jsonl")
	delete(b, "compose.intoto.jsonl")
	if d := diffSnapshots(a, b); d != "" {
		t.Errorf("two signed builds differ: %s", d)
	}

	// One byte changed after signing.
	bp := filepath.Join(out, "blueprint.toml")
	data, err := os.ReadFile(bp)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x20
	if err := os.WriteFile(bp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = runCLI(t, "verify", out, "--key", pub)
	if code != exitError || stdout != "" || len(nonEmptyLines(stderr)) != 1 ||
		!strings.HasPrefix(stderr, "error: "+bp+": differs from the signed statement: changed after signing: sha256 ") {
		t.Errorf("verify after one byte of blueprint.toml changed = %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	t.Logf("verify after one byte changed: %s", strings.TrimSpace(stderr))
	r = s.cosignAttestation(t, pub, out, "blueprint.toml")
	if r.code == 0 || !strings.Contains(r.stderr, "no matching subject digest found") {
		t.Errorf("cosign accepts the changed blueprint.toml: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("cosign on the changed file: %s", lastLine(r.stderr))

	// A rebuild replaces a signed output (the statement is a file build
	// writes), and one without --sign-key leaves no stale statement.
	mustRun(t, "build", "--profile", "full", "--arch", "x86_64", "--release", "4.19", "--output", out)
	if _, err := os.Stat(filepath.Join(out, "compose.intoto.jsonl")); !os.IsNotExist(err) {
		t.Errorf("an unsigned rebuild kept the old statement (%v)", err)
	}
	_, stderr, code = runCLI(t, "verify", out, "--key", pub)
	if code != exitError || !strings.Contains(stderr, "no signed statement") {
		t.Errorf("verify of an unsigned build = %d, %q", code, stderr)
	}
}

func lastLine(s string) string {
	lines := nonEmptyLines(s)
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// TestSignBadInput: each bad key, password, flag or statement is one line
// on stderr, a non-zero exit, and nothing written; no password is echoed.
func TestSignBadInput(t *testing.T) {
	s := newSigner(t)
	priv, pub := s.keyPair(t, "cosign")
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not a key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COSIGN_PASSWORD", "test-password")
	signed := filepath.Join(dir, "signed")
	mustRun(t, "build", "--profile", "full", "--arch", "x86_64", "--release", "4.19", "--output", signed, "--sign-key", priv)
	other := filepath.Join(dir, "other")
	mustRun(t, "build", "--profile", "networking-only", "--arch", "x86_64", "--release", "4.19", "--output", other, "--sign-key", priv)
	// mixed: the full build with the networking-only build's statement.
	mixed := filepath.Join(dir, "mixed")
	mustRun(t, "build", "--profile", "full", "--arch", "x86_64", "--release", "4.19", "--output", mixed, "--sign-key", priv)
	st, err := os.ReadFile(filepath.Join(other, "compose.intoto.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mixed, "compose.intoto.jsonl"), st, 0o644); err != nil {
		t.Fatal(err)
	}
	_, otherPub := s.keyPair(t, "other")

	buildArgs := func(out string, extra ...string) []string {
		return append([]string{"build", "--profile", "full", "--arch", "x86_64", "--release", "4.19", "--output", out}, extra...)
	}
	tests := []struct {
		name     string
		password string
		args     []string
		code     int
		want     string
	}{
		{"sign with a file that is not a key", "test-password", buildArgs(filepath.Join(dir, "o1"), "--sign-key", text), exitError, "signing key " + text + ": not a cosign key: no PEM block"},
		{"sign with a public key", "test-password", buildArgs(filepath.Join(dir, "o2"), "--sign-key", pub), exitError, "signing key " + pub + " holds a public key"},
		{"sign with the wrong password", "not-the-password", buildArgs(filepath.Join(dir, "o3"), "--sign-key", priv), exitError, "wrong password: COSIGN_PASSWORD does not decrypt it"},
		{"sign with a missing key", "test-password", buildArgs(filepath.Join(dir, "o4"), "--sign-key", filepath.Join(dir, "nope.key")), exitError, "does not exist"},
		{"unknown SBOM format", "test-password", buildArgs(filepath.Join(dir, "o5"), "--sbom-format", "swid"), exitUsage, `--sbom-format "swid": unknown format`},
		{"verify with a private key", "", []string{"verify", signed, "--key", priv}, exitError, "public key " + priv + " holds a private key"},
		{"verify with a file that is not a key", "", []string{"verify", signed, "--key", text}, exitError, "public key " + text + ": not a cosign key"},
		{"verify with another key", "", []string{"verify", signed, "--key", otherPub}, exitError, "the signature does not verify with the public key " + otherPub},
		{"verify another composition's statement", "", []string{"verify", mixed, "--key", pub}, exitError, "the statement is of another composition"},
		{"verify without a key", "", []string{"verify", signed}, exitUsage, "--key KEY is required"},
		{"verify a directory that is not there", "", []string{"verify", filepath.Join(dir, "nothing"), "--key", pub}, exitError, "no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("COSIGN_PASSWORD", tc.password)
			before := snapshot(t, dir)
			stdout, stderr, code := runCLI(t, tc.args...)
			if code != tc.code || stdout != "" || len(nonEmptyLines(stderr)) != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and one line with %q", code, stdout, stderr, tc.code, tc.want)
			}
			if tc.password != "" && strings.Contains(stderr, tc.password) {
				t.Errorf("the password is in the message: %q", stderr)
			}
			if d := diffSnapshots(before, snapshot(t, dir)); d != "" {
				t.Errorf("something was written: %s", d)
			}
		})
	}
}
