package sigverify

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containers/image/v5/docker"
	"github.com/containers/image/v5/signature"
	//lint:ignore SA1019 the keyring containers/image's OpenPGP fallback reads.
	"golang.org/x/crypto/openpgp" //nolint:staticcheck
)

func certPEM(t *testing.T) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Unix(0, 0), NotAfter: time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// gpgKeyring returns an armored public keyring and the armored secret one.
func gpgKeyring(t *testing.T) (public, secret []byte) {
	t.Helper()
	e, err := openpgp.NewEntity("test", "", "test@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	var pub, sec bytes.Buffer
	if err := e.Serialize(&pub); err != nil {
		t.Fatal(err)
	}
	if err := e.SerializePrivate(&sec, nil); err != nil {
		t.Fatal(err)
	}
	return pub.Bytes(), sec.Bytes()
}

func ed25519PEM(t *testing.T) []byte {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func sigstorePolicy(field string, value any) []byte {
	req := map[string]any{"type": "sigstoreSigned", "signedIdentity": map[string]any{"type": "matchRepository"}}
	req[field] = value
	data, _ := json.Marshal(map[string]any{
		"default":    []any{map[string]any{"type": "reject"}},
		"transports": map[string]any{"docker": map[string]any{"quay.io": []any{req}}},
	})
	return data
}

func TestCheckPublicKey(t *testing.T) {
	pub, priv := publicKeyPEM(t)
	pub2, _ := publicKeyPEM(t)
	for _, tc := range []struct {
		name string
		data []byte
		want string // "" accepts
	}{
		{"one public key", pub, ""},
		{"white space around it", append(append([]byte("\n  \n"), pub...), "\n\n"...), ""},
		{"an ed25519 key", ed25519PEM(t), ""},
		{"public then private key", append(append([]byte{}, pub...), priv...), "holds a private key (block EC PRIVATE KEY)"},
		{"private key alone", priv, "holds a private key"},
		{"private key as text after", append(append([]byte{}, pub...), "-----BEGIN OPENSSH PRIVATE KEY\nb3Blbn\n"...), "holds a private key"},
		{"two public keys", append(append([]byte{}, pub...), pub2...), "2 PEM blocks (PUBLIC KEY, PUBLIC KEY)"},
		{"a certificate", certPEM(t), "unknown Public key PEM file type: CERTIFICATE"},
		{"text before", append([]byte("my key:\n"), pub...), "PEM decoding failed"},
		{"text after", append(append([]byte{}, pub...), "trailing words\n"...), "data after the PUBLIC KEY block"},
		{"empty", nil, "no PEM block"},
		{"headers", bytes.Replace(pub, []byte("-----\n"), []byte("-----\nComment: x\n\n"), 1), "PEM headers"},
		{"garbage base64", []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"), "asn1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPublicKey(tc.data)
			if tc.want == "" {
				if err != nil {
					t.Errorf("CheckPublicKey = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckPublicKey = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestLoadPolicyFiles: every file a policy names is read through the gate
// and checked before containers/image sees the policy; each refusal is one
// line naming the policy, the field and the file, and comes back at once.
func TestLoadPolicyFiles(t *testing.T) {
	dir := t.TempDir()
	pub, priv := publicKeyPEM(t)
	keyFile := writeFile(t, dir, "cosign.pub", pub)
	both := writeFile(t, dir, "both.pub", append(append([]byte{}, pub...), priv...))
	cert := writeFile(t, dir, "ca.pem", certPEM(t))
	ed := writeFile(t, dir, "ed.pub", ed25519PEM(t))
	gpgPub, gpgSec := gpgKeyring(t)
	ring := writeFile(t, dir, "ring.gpg", gpgPub)
	secRing := writeFile(t, dir, "secring.gpg", gpgSec)
	fifo := filepath.Join(dir, "fifo.pub")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.pub")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 10<<20); err != nil {
		t.Fatal(err)
	}
	signedBy := func(field string, v any) []byte {
		data, _ := json.Marshal(map[string]any{"default": []any{map[string]any{"type": "signedBy", "keyType": "GPGKeys", field: v}}})
		return data
	}
	fulcio := func(ca string) []byte {
		req := map[string]any{"type": "sigstoreSigned", "signedIdentity": map[string]any{"type": "matchRepository"}, "rekorPublicKeyPath": keyFile,
			"fulcio": map[string]any{"caPath": ca, "oidcIssuer": "https://example.com", "subjectEmail": "a@example.com"}}
		data, _ := json.Marshal(map[string]any{"default": []any{map[string]any{"type": "reject"}}, "transports": map[string]any{"docker": map[string]any{"quay.io": []any{req}}}})
		return data
	}
	many := make([]string, 300)
	for i := range many {
		many[i] = big
	}
	for _, tc := range []struct {
		name   string
		policy []byte
		want   string
	}{
		{"keyPath a named pipe", sigstorePolicy("keyPath", fifo), `transports.docker["quay.io"][0].keyPath: key ` + fifo + ` is not a regular file (a named pipe)`},
		{"keyPath /dev/zero", sigstorePolicy("keyPath", "/dev/zero"), "key /dev/zero is not a regular file (a character device)"},
		{"keyPath a directory", sigstorePolicy("keyPath", dir), "is not a regular file (a directory)"},
		{"keyPath missing", sigstorePolicy("keyPath", filepath.Join(dir, "nope.pub")), "nope.pub does not exist"},
		{"keyPath too large", sigstorePolicy("keyPath", big), "big.pub: file is larger than 65536 bytes"},
		{"keyPath public and private key", sigstorePolicy("keyPath", both), "key " + both + ": holds a private key"},
		{"keyPath a certificate", sigstorePolicy("keyPath", cert), "unknown Public key PEM file type"},
		{"keyPaths second a named pipe", sigstorePolicy("keyPaths", []string{keyFile, fifo}), `keyPaths[1]: key ` + fifo + ` is not a regular file`},
		{"fulcio caPath a named pipe", fulcio(fifo), `.fulcio.caPath: certificates ` + fifo + ` is not a regular file`},
		{"fulcio caPath a public key", fulcio(keyFile), "no PEM certificate"},
		{"fulcio caPath a private key", fulcio(both), "holds a private key"},
		{"signedBy keyPath /dev/zero", signedBy("keyPath", "/dev/zero"), `default[0].keyPath: keyring /dev/zero is not a regular file`},
		{"signedBy keyPath a secret keyring", signedBy("keyPath", secRing), "holds a private key (an OpenPGP secret key)"},
		{"signedBy keyPaths not a keyring", signedBy("keyPaths", []string{ring, keyFile}), "keyPaths[1]: keyring " + keyFile + ": not an OpenPGP keyring"},
		{"keyPaths naming a 10 MiB file 300 times", sigstorePolicy("keyPaths", many), "file is larger than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "policy.json", tc.policy)
			done := make(chan error, 1)
			go func() { _, err := LoadPolicy(p); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("LoadPolicy blocked on a file the policy names")
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "policy "+p+": ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("LoadPolicy = %v, want one line naming %s and saying %q", err, p, tc.want)
			}
		})
	}
	t.Run("rekor key not ECDSA", func(t *testing.T) {
		req := map[string]any{"type": "sigstoreSigned", "signedIdentity": map[string]any{"type": "matchRepository"},
			"fulcio": map[string]any{"caPath": cert, "oidcIssuer": "https://example.com", "subjectEmail": "a@example.com"}, "rekorPublicKeyPath": ed}
		data, _ := json.Marshal(map[string]any{"default": []any{req}})
		_, err := LoadPolicy(writeFile(t, t.TempDir(), "policy.json", data))
		if err == nil || !strings.Contains(err.Error(), "not an ECDSA key") {
			t.Errorf("LoadPolicy = %v, want not an ECDSA key", err)
		}
	})
	t.Run("many names of one small file", func(t *testing.T) {
		names := make([]string, 1000)
		for i := range names {
			names[i] = keyFile
		}
		_, err := LoadPolicy(writeFile(t, t.TempDir(), "policy.json", sigstorePolicy("keyPaths", names)))
		if err != nil {
			t.Errorf("LoadPolicy = %v, want nil (%d bytes inlined)", err, 1000*len(pub))
		}
		// A 1 MiB CA bundle named by 5 scopes: 5 MiB inlined.
		// One certificate repeated: each certPEM call signs anew, and ECDSA
		// signatures vary in length, so the count is taken from the same one.
		one := certPEM(t)
		bundle := writeFile(t, dir, "bundle.pem", bytes.Repeat(one, (1<<20-4096)/len(one)))
		scopes := map[string]any{}
		for i := range 5 {
			scopes[fmt.Sprintf("quay.io/r%d", i)] = []any{map[string]any{"type": "sigstoreSigned", "signedIdentity": map[string]any{"type": "matchRepository"},
				"fulcio": map[string]any{"caPath": bundle, "oidcIssuer": "https://example.com", "subjectEmail": "a@example.com"}, "rekorPublicKeyPath": keyFile}}
		}
		data, _ := json.Marshal(map[string]any{"default": []any{map[string]any{"type": "reject"}}, "transports": map[string]any{"docker": scopes}})
		_, err = LoadPolicy(writeFile(t, t.TempDir(), "policy.json", data))
		if err == nil || !strings.Contains(err.Error(), "add up to more than") {
			t.Errorf("LoadPolicy = %v, want the files' total refused", err)
		}
	})
}

// TestLoadPolicyInlines: an accepted policy's evaluated form names no file
// (containers/image opens nothing), holds exactly the checked contents, and
// the policy's own JSON stays the user's.
func TestLoadPolicyInlines(t *testing.T) {
	dir := t.TempDir()
	pub, _ := publicKeyPEM(t)
	pub2, _ := publicKeyPEM(t)
	gpgPub, _ := gpgKeyring(t)
	k1, k2 := writeFile(t, dir, "a.pub", pub), writeFile(t, dir, "b.pub", pub2)
	ring := writeFile(t, dir, "ring.gpg", gpgPub)
	req := map[string]any{"type": "sigstoreSigned", "keyPaths": []string{k1, k2}, "signedIdentity": map[string]any{"type": "matchRepository"}}
	sb := map[string]any{"type": "signedBy", "keyType": "GPGKeys", "keyPaths": []string{ring, ring}}
	data, _ := json.Marshal(map[string]any{
		"default":    []any{map[string]any{"type": "reject"}},
		"transports": map[string]any{"docker": map[string]any{"quay.io/a": []any{req}, "quay.io/b": []any{sb}}},
	})
	path := writeFile(t, dir, "policy.json", data)
	tr, err := LoadPolicy(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tr.JSON, data) {
		t.Errorf("Trust.JSON is not the user's policy")
	}
	evaluated, err := json.Marshal(tr.Policy)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"keyPath"`, `"keyPaths"`, dir} {
		if bytes.Contains(evaluated, []byte(field)) {
			t.Errorf("the evaluated policy still names %s: %s", field, evaluated)
		}
	}
	var back struct {
		Transports map[string]map[string][]struct {
			KeyDatas [][]byte `json:"keyDatas"`
			KeyData  []byte   `json:"keyData"`
		} `json:"transports"`
	}
	if err := json.Unmarshal(evaluated, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Transports["docker"]["quay.io/a"][0].KeyDatas; len(got) != 2 || !bytes.Equal(got[0], pub) || !bytes.Equal(got[1], pub2) {
		t.Errorf("keyDatas = %q, want the two keys", got)
	}
	if _, ids, err := signature.NewEphemeralGPGSigningMechanism(back.Transports["docker"]["quay.io/b"][0].KeyData); err != nil || len(ids) != 2 {
		t.Errorf("signedBy keyData: %d identities, %v; want the keyring twice", len(ids), err)
	}
	ref, err := docker.ParseReference("//quay.io/a:latest")
	if err != nil {
		t.Fatal(err)
	}
	if got := RuleFor(tr.Policy, ref); got != `docker "quay.io/a" (sigstoreSigned)` {
		t.Errorf("RuleFor = %s", got)
	}
}

// TestCheckDevicePolicy: a device policy's files are checked where this
// build places them or this machine has them; the others are reported.
func TestCheckDevicePolicy(t *testing.T) {
	dir := t.TempDir()
	pub, priv := publicKeyPEM(t)
	both := writeFile(t, dir, "both.pub", append(append([]byte{}, pub...), priv...))
	fifo := filepath.Join(dir, "fifo.pub")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	placed := map[string][]byte{"/etc/containers/sigstore/cosign.pub": pub, "/etc/containers/sigstore/cert.pub": certPEM(t)}
	for _, tc := range []struct {
		name, keyPath, want, missing string
	}{
		{"placed by --verify-key", "/etc/containers/sigstore/cosign.pub", "", ""},
		{"on neither", "/etc/pki/nowhere/cosign.pub", "", "/etc/pki/nowhere/cosign.pub"},
		{"a named pipe here", fifo, "is not a regular file (a named pipe)", ""},
		{"a device here", "/dev/zero", "is not a regular file (a character device)", ""},
		{"a private key here", both, "holds a private key", ""},
		{"relative", "keys/cosign.pub", "is not an absolute path", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "policy.json", sigstorePolicy("keyPath", tc.keyPath))
			tr, err := ParsePolicy(path)
			if err != nil {
				t.Fatal(err)
			}
			missing, err := CheckDevicePolicy(tr, path, placed)
			switch {
			case tc.want != "":
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "keyPath") {
					t.Errorf("CheckDevicePolicy = %v, want %q naming keyPath", err, tc.want)
				}
			case err != nil:
				t.Errorf("CheckDevicePolicy = %v", err)
			case tc.missing == "" && len(missing) > 0, tc.missing != "" && (len(missing) != 1 || missing[0].Path != tc.missing):
				t.Errorf("missing = %v, want %q", missing, tc.missing)
			}
		})
	}
}

// FuzzCheckPublicKey: whatever CheckPublicKey accepts is one public key
// containers/image parses, and holds no private key.
func FuzzCheckPublicKey(f *testing.F) {
	f.Add([]byte("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n-----END PUBLIC KEY-----\n"))
	f.Add([]byte("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n-----END PUBLIC KEY-----\n-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n"))
	f.Add([]byte("junk"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if CheckPublicKey(data) != nil {
			return
		}
		if bytes.Contains(data, []byte("PRIVATE")) {
			t.Fatalf("accepted a file naming a private key: %q", data)
		}
		n := 0
		for rest := data; ; n++ {
			b, r := pem.Decode(rest)
			if b == nil {
				if len(bytes.TrimSpace(rest)) != 0 {
					t.Fatalf("accepted text beside the key: %q", rest)
				}
				break
			}
			rest = r
		}
		if n != 1 {
			t.Fatalf("accepted %d PEM blocks", n)
		}
	})
}

// FuzzInlinePolicyFiles: any policy JSON gives an error or a policy whose
// requirements name no file; a policy naming none comes back the same.
func FuzzInlinePolicyFiles(f *testing.F) {
	f.Add(string(sigstorePolicy("keyPath", "/dev/null")))
	f.Add(string(sigstorePolicy("keyPaths", []string{"/nonexistent", ""})))
	f.Add(`{"default":[{"type":"signedBy","keyType":"GPGKeys","keyPaths":["/dev/zero"]}]}`)
	f.Add(`{"default":[{"type":"insecureAcceptAnything"}],"transports":{"docker":{"a":[{"type":"reject"}]}}}`)
	f.Fuzz(func(t *testing.T, policy string) {
		if _, err := signature.NewPolicyFromBytes([]byte(policy)); err != nil {
			return
		}
		out, err := inlinePolicyFiles("fuzz.json", []byte(policy))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a multi-line error: %q", err)
			}
			return
		}
		tree, err := decodePolicyTree(out)
		if err != nil {
			t.Fatalf("inlined policy does not decode: %v", err)
		}
		named := false
		_ = tree.visitFiles(false, func(PolicyFile) ([]byte, error) { named = true; return nil, nil })
		if named {
			t.Fatalf("inlined policy still names files: %s", out)
		}
		if _, err := signature.NewPolicyFromBytes(out); err != nil && !errors.Is(err, ErrBadPolicy) {
			t.Fatalf("inlined policy does not parse: %v\n%s", err, out)
		}
	})
}
