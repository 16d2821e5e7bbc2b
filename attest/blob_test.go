package attest_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/microshift-compose/microshift-compose/attest"
)

// signerFor is a Signer and its Verifier for a freshly generated key of
// each type cosign supports, through cosign's encrypted key file.
func signerFor(t testing.TB, kind string) (*attest.Signer, *attest.Verifier) {
	t.Helper()
	var key crypto.PrivateKey
	var err error
	switch kind {
	case "ecdsa":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "rsa":
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ed25519":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	der, err := cryptoutils.MarshalPrivateKeyToEncryptedDER(key, cryptoutils.StaticPasswordFunc([]byte("pw")))
	if err != nil {
		t.Fatal(err)
	}
	s, err := attest.ParseSigner(kind+".key", pem.EncodeToMemory(&pem.Block{Type: string(cryptoutils.EncryptedSigstorePrivateKeyPEMType), Bytes: der}), []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	pubPEM, err := cryptoutils.MarshalPublicKeyToPEM(s.Public())
	if err != nil {
		t.Fatal(err)
	}
	v, err := attest.ParseVerifier(kind+".pub", pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

// opener counts how often the blob is read again.
func opener(data []byte, n *int) attest.Opener {
	return func() (io.ReadCloser, error) {
		*n++
		return io.NopCloser(bytes.NewReader(data)), nil
	}
}

// TestSignBlob: a signature over a blob's digest verifies with the key
// (and with sigstore's own verifier over the whole blob, which is what
// cosign verify-blob runs), not with another key nor over other bytes;
// only Ed25519 reads the blob again.
func TestSignBlob(t *testing.T) {
	ctx := context.Background()
	blob := bytes.Repeat([]byte("bundle bytes "), 1000)
	digest := sha256.Sum256(blob)
	altered := bytes.Clone(blob)
	altered[len(altered)/2] ^= 1
	alteredDigest := sha256.Sum256(altered)
	_, other := signerFor(t, "ecdsa")
	for _, kind := range []string{"ecdsa", "rsa", "ed25519"} {
		t.Run(kind, func(t *testing.T) {
			s, v := signerFor(t, kind)
			reads := 0
			sig64, err := s.SignBlob(ctx, digest[:], opener(blob, &reads))
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]int{"ed25519": 1}[kind]; reads != want {
				t.Errorf("signing read the blob %d times, want %d", reads, want)
			}
			if bytes.ContainsAny(sig64, "\n ") {
				t.Errorf("signature %q is not one base64 string", sig64)
			}
			sig, err := attest.DecodeBlobSignature("x.sig", append(sig64, '\n'))
			if err != nil {
				t.Fatal(err)
			}
			// What cosign verify-blob does: the key's verifier over the
			// blob's bytes.
			sv, err := signature.LoadVerifier(s.Public(), crypto.SHA256)
			if err != nil {
				t.Fatal(err)
			}
			if err := sv.VerifySignature(bytes.NewReader(sig), bytes.NewReader(blob)); err != nil {
				t.Errorf("sigstore's verifier refuses the blob signature: %v", err)
			}
			got, err := attest.VerifyBlob(ctx, []*attest.Verifier{other, v}, sig, digest[:], opener(blob, &reads))
			if err != nil || got != v {
				t.Errorf("VerifyBlob(right key among two) = %v, %v", got, err)
			}
			if _, err := attest.VerifyBlob(ctx, []*attest.Verifier{other}, sig, digest[:], opener(blob, &reads)); !errors.Is(err, attest.ErrSignature) {
				t.Errorf("VerifyBlob(another key) = %v, want ErrSignature", err)
			}
			if _, err := attest.VerifyBlob(ctx, []*attest.Verifier{v}, sig, alteredDigest[:], opener(altered, &reads)); !errors.Is(err, attest.ErrSignature) {
				t.Errorf("VerifyBlob(altered blob) = %v, want ErrSignature", err)
			}
		})
	}
}

func TestDecodeBlobSignature(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		want string
	}{
		{"empty", "", "x.sig: empty, not a signature"},
		{"white space", " \n", "x.sig: empty, not a signature"},
		{"not base64", "MEUCIQ*==", "x.sig: not a base64 signature (cosign sign-blob's format): illegal base64 data at input byte 6"},
		{"too large", strings.Repeat("A", 20<<10), "x.sig: 20480 bytes, more than a signature (at most 16384)"},
	} {
		if _, err := attest.DecodeBlobSignature("x.sig", []byte(tc.data)); err == nil || err.Error() != tc.want {
			t.Errorf("%s: DecodeBlobSignature = %v, want %q", tc.name, err, tc.want)
		}
	}
	raw := []byte{1, 2, 3, 4}
	got, err := attest.DecodeBlobSignature("x.sig", []byte(base64.StdEncoding.EncodeToString(raw)+"\n"))
	if err != nil || !bytes.Equal(got, raw) {
		t.Errorf("DecodeBlobSignature(base64 and a newline) = %v, %v", got, err)
	}
}

// FuzzVerifyBlob: no signature file, however malformed, panics the
// verifier, and what it accepts sigstore's verifier over the whole blob
// (cosign verify-blob's check) accepts too.
func FuzzVerifyBlob(f *testing.F) {
	s, v := signerFor(f, "ecdsa")
	blob := []byte("blob")
	digest := sha256.Sum256(blob)
	n := 0
	good, err := s.SignBlob(context.Background(), digest[:], opener(blob, &n))
	if err != nil {
		f.Fatal(err)
	}
	sv, err := signature.LoadVerifier(s.Public(), crypto.SHA256)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte("MEUCIQ=="))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		sig, err := attest.DecodeBlobSignature("f.sig", data)
		if err != nil {
			return
		}
		if _, err := attest.VerifyBlob(context.Background(), []*attest.Verifier{v}, sig, digest[:], opener(blob, &n)); err == nil {
			if err := sv.VerifySignature(bytes.NewReader(sig), bytes.NewReader(blob)); err != nil {
				t.Errorf("VerifyBlob accepts %q, which sigstore's verifier over the blob refuses: %v", data, err)
			}
		}
	})
}
