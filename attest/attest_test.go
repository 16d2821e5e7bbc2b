package attest_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ita "github.com/in-toto/attestation/go/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	sigdsse "github.com/sigstore/sigstore/pkg/signature/dsse"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/microshift-compose/microshift-compose/attest"
)

// keyPair is a key pair in cosign's files: the private key in the
// encrypted "ENCRYPTED SIGSTORE PRIVATE KEY" PEM cosign generate-key-pair
// writes (sigstore's own encoder, which cosign calls), the public key in
// PEM. The command tests use keys cosign itself generated.
func keyPair(t testing.TB, password string) (priv, pub []byte) {
	t.Helper()
	priv, pub, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc([]byte(password)))
	if err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

func statement(t testing.TB, subjects ...string) *ita.Statement {
	t.Helper()
	pred, err := structpb.NewStruct(map[string]any{"b": "2", "a": map[string]any{"z": 1, "y": []any{"x"}}})
	if err != nil {
		t.Fatal(err)
	}
	st := &ita.Statement{Type: ita.StatementTypeUri, PredicateType: "https://example.com/test/v1", Predicate: pred}
	for _, s := range subjects {
		st.Subject = append(st.Subject, &ita.ResourceDescriptor{Name: s, Digest: map[string]string{"sha256": strings.Repeat("ab", 32)}})
	}
	return st
}

func TestSignVerify(t *testing.T) {
	ctx := context.Background()
	priv, pub := keyPair(t, "secret")
	s, err := attest.ParseSigner("cosign.key", priv, []byte("secret"))
	if err != nil {
		t.Fatalf("ParseSigner() = %v", err)
	}
	v, err := attest.ParseVerifier("cosign.pub", pub)
	if err != nil {
		t.Fatalf("ParseVerifier() = %v", err)
	}
	env, err := s.Sign(ctx, statement(t, "a.txt", "b.txt"))
	if err != nil {
		t.Fatalf("Sign() = %v", err)
	}
	if bytes.Count(env, []byte("\n")) != 1 || !bytes.HasSuffix(env, []byte("\n")) {
		t.Errorf("the envelope is not one line of JSON: %q", env)
	}
	got, err := v.Verify(ctx, "compose.intoto.jsonl", env)
	if err != nil {
		t.Fatalf("Verify() = %v", err)
	}
	if n := len(got.Statement.GetSubject()); n != 2 || got.Statement.GetSubject()[1].GetName() != "b.txt" {
		t.Errorf("verified statement subjects = %v", got.Statement.GetSubject())
	}
	want, err := attest.EncodeStatement(statement(t, "a.txt", "b.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Payload, want) {
		t.Errorf("payload = %s, want %s", got.Payload, want)
	}

	// Another key's public key refuses it.
	_, otherPub := keyPair(t, "")
	other, err := attest.ParseVerifier("other.pub", otherPub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Verify(ctx, "compose.intoto.jsonl", env); !errors.Is(err, attest.ErrSignature) || !strings.Contains(err.Error(), "other.pub") {
		t.Errorf("Verify() with another key = %v, want ErrSignature naming other.pub", err)
	}

	// A statement changed after signing (one subject renamed) refuses.
	var e dsse.Envelope
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	payload, _ := base64.StdEncoding.DecodeString(e.Payload)
	e.Payload = base64.StdEncoding.EncodeToString(bytes.Replace(payload, []byte("b.txt"), []byte("c.txt"), 1))
	changed, _ := json.Marshal(e)
	if _, err := v.Verify(ctx, "compose.intoto.jsonl", changed); !errors.Is(err, attest.ErrSignature) {
		t.Errorf("Verify() of a changed statement = %v, want ErrSignature", err)
	}
}

// TestEncodeStatementCanonical: the same statement gives the same bytes,
// keys sorted, nothing between tokens; a statement the bindings find
// invalid is refused.
func TestEncodeStatementCanonical(t *testing.T) {
	a, err := attest.EncodeStatement(statement(t, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := attest.EncodeStatement(statement(t, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("two encodings differ:\n%s\n%s", a, b)
	}
	want := `{"_type":"https://in-toto.io/Statement/v1","predicate":{"a":{"y":["x"],"z":1},"b":"2"},"predicateType":"https://example.com/test/v1","subject":[{"digest":{"sha256":"` + strings.Repeat("ab", 32) + `"},"name":"a.txt"}]}`
	if string(a) != want {
		t.Errorf("EncodeStatement() =\n%s\nwant\n%s", a, want)
	}
	if _, err := attest.EncodeStatement(statement(t)); !errors.Is(err, ita.ErrSubjectRequired) {
		t.Errorf("EncodeStatement() without subjects = %v, want ErrSubjectRequired", err)
	}
}

// TestSignDeterministicEd25519: with a key whose signatures are
// deterministic the whole envelope is the same bytes; with ECDSA only the
// payload is (TestSignVerify).
func TestSignDeterministicEd25519(t *testing.T) {
	_, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := cryptoutils.MarshalPrivateKeyToEncryptedDER(edPriv, cryptoutils.StaticPasswordFunc([]byte("pw")))
	if err != nil {
		t.Fatal(err)
	}
	priv := pem.EncodeToMemory(&pem.Block{Type: string(cryptoutils.EncryptedSigstorePrivateKeyPEMType), Bytes: der})
	s, err := attest.ParseSigner("ed.key", priv, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Sign(context.Background(), statement(t, "x"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Sign(context.Background(), statement(t, "x"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("two Ed25519 envelopes of one statement differ")
	}
	pubPEM, err := cryptoutils.MarshalPublicKeyToPEM(s.Public())
	if err != nil {
		t.Fatal(err)
	}
	v, err := attest.ParseVerifier("ed.pub", pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), "x", a); err != nil {
		t.Errorf("Verify(Ed25519) = %v", err)
	}
}

// TestKeyErrors: every key file that is not what it must be is refused in
// one line naming the file, with the sentinel callers branch on.
func TestKeyErrors(t *testing.T) {
	priv, pub := keyPair(t, "right")
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	plainPriv, err := cryptoutils.MarshalPrivateKeyToPEM(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0)}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &ecKey.PublicKey, ecKey)
	if err != nil {
		t.Fatal(err)
	}
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER})

	signers := []struct {
		name     string
		data     []byte
		password string
		want     error
		msg      string
	}{
		{"text", []byte("hello\n"), "right", attest.ErrNotKey, "no PEM block"},
		{"empty", nil, "right", attest.ErrNotKey, "no PEM block"},
		{"public key", pub, "right", attest.ErrPublicKey, "cosign.pub"},
		{"wrong password", priv, "wrong", attest.ErrPassword, "COSIGN_PASSWORD"},
		{"no password", priv, "", attest.ErrPassword, "COSIGN_PASSWORD"},
		{"unencrypted", plainPriv, "", attest.ErrNotKey, "cosign import-key-pair"},
		{"certificate", cert, "", attest.ErrNotKey, "CERTIFICATE"},
		{"two blocks", append(append([]byte{}, priv...), pub...), "right", attest.ErrNotKey, "more than"},
		{"damaged", bytes.Replace(priv, []byte("\n"), []byte("\nAAAA"), 3), "right", attest.ErrNotKey, ""},
	}
	for _, tc := range signers {
		t.Run("signer/"+tc.name, func(t *testing.T) {
			_, err := attest.ParseSigner("k.key", tc.data, []byte(tc.password))
			if !errors.Is(err, tc.want) {
				t.Fatalf("ParseSigner() = %v, want %v", err, tc.want)
			}
			if msg := err.Error(); !strings.Contains(msg, "k.key") || !strings.Contains(msg, tc.msg) || strings.Contains(msg, "\n") {
				t.Errorf("ParseSigner() = %q: want one line naming k.key and %q", msg, tc.msg)
			}
		})
	}
	verifiers := []struct {
		name string
		data []byte
		want error
	}{
		{"text", []byte("hello\n"), attest.ErrNotKey},
		{"encrypted private key", priv, attest.ErrPrivateKey},
		{"plain private key", plainPriv, attest.ErrPrivateKey},
		{"certificate", cert, attest.ErrNotKey},
		{"two keys", append(append([]byte{}, pub...), pub...), attest.ErrNotKey},
	}
	for _, tc := range verifiers {
		t.Run("verifier/"+tc.name, func(t *testing.T) {
			_, err := attest.ParseVerifier("k.pub", tc.data)
			if !errors.Is(err, tc.want) {
				t.Fatalf("ParseVerifier() = %v, want %v", err, tc.want)
			}
			if msg := err.Error(); !strings.Contains(msg, "k.pub") || strings.Contains(msg, "\n") {
				t.Errorf("ParseVerifier() = %q: want one line naming k.pub", msg)
			}
		})
	}
	// Through the file gate: a directory and a missing file name the path.
	dir := t.TempDir()
	if _, err := attest.LoadSigner(dir, nil); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("LoadSigner(dir) = %v", err)
	}
	missing := filepath.Join(dir, "nope.pub")
	if _, err := attest.LoadVerifier(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("LoadVerifier(missing) = %v", err)
	}
	good := filepath.Join(dir, "cosign.key")
	if err := os.WriteFile(good, priv, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := attest.LoadSigner(good, []byte("right")); err != nil {
		t.Errorf("LoadSigner(%s) = %v", good, err)
	}
}

// TestVerifyBadEnvelopes: what is not one signed in-toto envelope is
// refused in one line naming the file, before any signature is checked.
func TestVerifyBadEnvelopes(t *testing.T) {
	ctx := context.Background()
	priv, pub := keyPair(t, "")
	s, err := attest.ParseSigner("cosign.key", priv, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := attest.ParseVerifier("cosign.pub", pub)
	if err != nil {
		t.Fatal(err)
	}
	env, err := s.Sign(ctx, statement(t, "a"))
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]any
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	with := func(k string, val any) []byte {
		m := map[string]any{}
		for kk, vv := range e {
			m[kk] = vv
		}
		if val == nil {
			delete(m, k)
		} else {
			m[k] = val
		}
		b, _ := json.Marshal(m)
		return b
	}
	// A validly signed payload that is not an in-toto statement.
	es, _ := dsse.NewEnvelopeSigner(signerOf(t, priv))
	notStatement, err := es.SignPayload(ctx, attest.PayloadType, []byte(`{"hello":"world"}`))
	if err != nil {
		t.Fatal(err)
	}
	notStatementJSON, _ := json.Marshal(notStatement)
	tests := []struct {
		name string
		data []byte
		msg  string
	}{
		{"empty", nil, "not a DSSE envelope"},
		{"not JSON", []byte("{{"), "not a DSSE envelope"},
		{"two envelopes", append(append([]byte{}, env...), env...), "more than one"},
		{"unknown field", with("extra", 1), "not a DSSE envelope"},
		{"other payload type", with("payloadType", "text/plain"), "payload type"},
		{"no payload", with("payload", nil), "no payload"},
		{"unsigned", with("signatures", []any{}), "not signed"},
		{"not base64 signature", with("signatures", []any{map[string]any{"keyid": "", "sig": "%%%"}}), ""},
		{"not a statement", notStatementJSON, "not an in-toto statement"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(ctx, "out/compose.intoto.jsonl", tc.data)
			if err == nil {
				t.Fatal("Verify() = nil, want an error")
			}
			if msg := err.Error(); !strings.Contains(msg, "out/compose.intoto.jsonl") || !strings.Contains(msg, tc.msg) || strings.Contains(msg, "\n") {
				t.Errorf("Verify() = %q: want one line naming the file and %q", msg, tc.msg)
			}
		})
	}
}

// signerOf signs arbitrary payloads with the key in priv (cosign's
// encrypted PEM, no password), for envelopes Sign would never make.
func signerOf(t *testing.T, priv []byte) dsse.Signer {
	t.Helper()
	pk, err := cryptoutils.UnmarshalPEMToPrivateKey(priv, cryptoutils.StaticPasswordFunc([]byte{}))
	if err != nil {
		t.Fatal(err)
	}
	sv, err := signature.LoadSignerVerifier(pk, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := sv.PublicKey()
	return &sigdsse.SignerAdapter{SignatureSigner: sv, Pub: pub}
}

// FuzzVerify: no envelope, however malformed, panics the verifier or
// verifies without the key's signature.
func FuzzVerify(f *testing.F) {
	priv, pub := keyPair(f, "")
	s, err := attest.ParseSigner("cosign.key", priv, nil)
	if err != nil {
		f.Fatal(err)
	}
	v, err := attest.ParseVerifier("cosign.pub", pub)
	if err != nil {
		f.Fatal(err)
	}
	env, err := s.Sign(context.Background(), statement(f, "a"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(env)
	f.Add([]byte(`{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[{"keyid":"","sig":"AAAA"}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := v.Verify(context.Background(), "f", data)
		if err != nil {
			return
		}
		// Whatever verified carries a payload the key signed: the one
		// signed above is the only one this key ever signed.
		want, _ := attest.EncodeStatement(statement(t, "a"))
		if !bytes.Equal(got.Payload, want) {
			t.Fatalf("verified a payload the key never signed: %s", got.Payload)
		}
	})
}

// BenchmarkDecrypt is what --sign-key costs before any signing: cosign's
// scrypt key derivation (N=32768, r=8: 32 MiB), once per process.
func BenchmarkDecrypt(b *testing.B) {
	priv, _ := keyPair(b, "pw")
	k, err := attest.ParseSigningKey("cosign.key", priv)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := k.Decrypt([]byte("pw")); err != nil {
			b.Fatal(err)
		}
	}
}

// An unset $COSIGN_PASSWORD (nil) is said as such, not as a wrong password;
// a key without a password decrypts with it unset.
func TestSignerPasswordUnset(t *testing.T) {
	priv, _ := keyPair(t, "right")
	_, err := attest.ParseSigner("cosign.key", priv, nil)
	if !errors.Is(err, attest.ErrPassword) || !strings.Contains(err.Error(), "$COSIGN_PASSWORD is not set") {
		t.Errorf("ParseSigner(unset) = %v, want that COSIGN_PASSWORD is not set", err)
	}
	_, err = attest.ParseSigner("cosign.key", priv, []byte("wrong"))
	if !errors.Is(err, attest.ErrPassword) || !strings.Contains(err.Error(), "COSIGN_PASSWORD does not decrypt it") {
		t.Errorf("ParseSigner(wrong) = %v, want a wrong password", err)
	}
	none, _ := keyPair(t, "")
	if _, err := attest.ParseSigner("cosign.key", none, nil); err != nil {
		t.Errorf("ParseSigner(a key without a password, unset) = %v", err)
	}
}
