package sigverify

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containers/image/v5/docker"
	"github.com/containers/image/v5/signature"
)

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func publicKeyPEM(t *testing.T) (pub, priv []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: pder})
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	pub, priv := publicKeyPEM(t)
	key := writeFile(t, dir, "release.pub", pub)
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"malformed policy", Options{Policy: writeFile(t, dir, "bad.json", []byte(`{"default": [`))}, "bad.json: invalid containers policy"},
		{"unknown key", Options{Policy: writeFile(t, dir, "unknown.json", []byte(`{"default":[{"type":"reject"}],"transprots":{}}`))}, "unknown.json: invalid containers policy"},
		{"empty default", Options{Policy: writeFile(t, dir, "empty.json", []byte(`{"default":[]}`))}, "empty.json: invalid containers policy"},
		{"missing policy", Options{Policy: filepath.Join(dir, "nope.json")}, "policy " + filepath.Join(dir, "nope.json") + " does not exist"},
		{"policy is a directory", Options{Policy: dir}, "is not a regular file"},
		{"key that is no key", Options{Keys: []string{writeFile(t, dir, "notakey.pub", []byte("hello\n"))}}, "notakey.pub: not a PEM public key"},
		{"private key", Options{Keys: []string{writeFile(t, dir, "cosign.key", priv)}}, "cosign.key: not a PEM public key"},
		{"two keys one name", Options{Keys: []string{key, writeFile(t, t.TempDir(), "release.pub", pub)}}, "would both be installed as release.pub"},
		{"both", Options{Policy: key, Keys: []string{key}}, "give one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := Load(tc.opts, []string{"quay.io/org/repo@sha256:" + strings.Repeat("a", 64)})
			if err == nil {
				t.Fatalf("Load = %v, nil; want an error containing %q", tr, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Load error = %q, want one line containing %q", err, tc.want)
			}
		})
	}
	if tr, err := Load(Options{}, nil); tr != nil || err != nil {
		t.Errorf("Load(no policy) = %v, %v; want nil, nil", tr, err)
	}
}

// TestKeyTrustRoundTrip: the generated policy is what containers/image
// reads back (from a file, as a device does), deterministic, and its rules
// are where they should be.
func TestKeyTrustRoundTrip(t *testing.T) {
	dir := t.TempDir()
	pub, _ := publicKeyPEM(t)
	keys, err := ReadKeys([]string{writeFile(t, dir, "my key!.pem", pub)})
	if err != nil {
		t.Fatal(err)
	}
	if keys[0].Name != "my-key-" {
		t.Errorf("key name = %q, want my-key-", keys[0].Name)
	}
	refs := []string{
		"quay.io/openshift-release-dev/ocp-v5.0-art-dev@sha256:" + strings.Repeat("b", 64),
		"registry.redhat.io/lvms4/lvms-rhel9-operator@sha256:" + strings.Repeat("c", 64),
		"quay.io/openshift-release-dev/ocp-v5.0-art-dev@sha256:" + strings.Repeat("d", 64),
	}
	scopes, err := Scopes(refs)
	if err != nil {
		t.Fatal(err)
	}
	if want := "quay.io/openshift-release-dev/ocp-v5.0-art-dev registry.redhat.io/lvms4/lvms-rhel9-operator"; strings.Join(scopes, " ") != want {
		t.Errorf("Scopes = %v, want %s", scopes, want)
	}
	path := func(k Key) string { return "/etc/containers/sigstore/" + k.Name + ".pub" }
	a, err := KeyTrust(keys, scopes, path, Scope{Transport: "dir", Scope: "/usr/lib/x/images"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := KeyTrust(keys, scopes, path, Scope{Transport: "dir", Scope: "/usr/lib/x/images"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.JSON, b.JSON) {
		t.Errorf("the same keys gave two policies:\n%s\n%s", a.JSON, b.JSON)
	}
	for _, want := range []string{`"keyPath": "/etc/containers/sigstore/my-key-.pub"`, `"type": "matchRepository"`, `"type": "reject"`, `"/usr/lib/x/images"`} {
		if !bytes.Contains(a.JSON, []byte(want)) {
			t.Errorf("policy lacks %s:\n%s", want, a.JSON)
		}
	}
	file := writeFile(t, dir, "policy.json", a.JSON)
	p, err := signature.NewPolicyFromFile(file)
	if err != nil {
		t.Fatalf("containers/image does not read the policy back: %v", err)
	}
	for _, tc := range []struct{ ref, want string }{
		{"//" + refs[0], `docker "quay.io/openshift-release-dev/ocp-v5.0-art-dev" (sigstoreSigned)`},
		{"//" + refs[1], `docker "registry.redhat.io/lvms4/lvms-rhel9-operator" (sigstoreSigned)`},
		{"//quay.io/other/repo:latest", `default (reject)`},
	} {
		ref, err := docker.ParseReference(tc.ref)
		if err != nil {
			t.Fatal(err)
		}
		if got := RuleFor(p, ref); got != tc.want {
			t.Errorf("RuleFor(%s) = %s, want %s", tc.ref, got, tc.want)
		}
	}
	// With keyDatas (what mirror evaluates), the policy parses too.
	m, err := KeyTrust(keys, scopes, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(m.JSON, []byte(`"keyData"`)) {
		t.Errorf("in-memory policy has no keyData:\n%s", m.JSON)
	}
}

func TestReadKeysGate(t *testing.T) {
	// A named pipe is refused without blocking (the one input gate).
	dir := t.TempDir()
	fifo := filepath.Join(dir, "key.pub")
	if err := mkfifo(fifo); err != nil {
		t.Skip("mkfifo:", err)
	}
	_, err := ReadKeys([]string{fifo})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("ReadKeys(fifo) = %v, want not a regular file", err)
	}
	if errors.Is(err, ErrBadKey) {
		t.Errorf("a fifo was parsed as a key")
	}
}

func FuzzKeyName(f *testing.F) {
	for _, s := range []string{"cosign.pub", "../../etc/passwd", ".hidden.pub", "a b/c.pem", "\x00.pub", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		n := keyName(path)
		if n == "" || strings.HasPrefix(n, ".") || strings.ContainsAny(n, "/\x00 ") {
			t.Fatalf("keyName(%q) = %q: not a safe file name", path, n)
		}
	})
}
