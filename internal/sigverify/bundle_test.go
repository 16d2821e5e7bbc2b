package sigverify

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	ssldsse "github.com/secure-systems-lab/go-securesystemslib/dsse"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	sigdsse "github.com/sigstore/sigstore/pkg/signature/dsse"
	"github.com/sigstore/sigstore/pkg/signature/options"
	"google.golang.org/protobuf/encoding/protojson"
)

// testKey is a generated key: its signer and its PEM public key.
func testKey(t *testing.T) (signature.SignerVerifier, []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := signature.LoadSignerVerifier(k, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := cryptoutils.MarshalPublicKeyToPEM(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	return sv, pem
}

// dsseBundle is a sigstore bundle of an in-toto statement about subject
// (hex), signed with sv, as cosign attest --new-bundle-format makes one.
func dsseBundle(t *testing.T, sv signature.SignerVerifier, subject string) []byte {
	t.Helper()
	payload := []byte(`{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"img","digest":{"sha256":"` + subject + `"}}],"predicateType":"https://spdx.dev/Document","predicate":{}}`)
	es, err := ssldsse.NewEnvelopeSigner(&sigdsse.SignerAdapter{SignatureSigner: sv})
	if err != nil {
		t.Fatal(err)
	}
	env, err := es.SignPayload(context.Background(), inTotoPayloadType, payload)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	if err != nil {
		t.Fatal(err)
	}
	b := &protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload: payload, PayloadType: inTotoPayloadType,
			Signatures: []*protodsse.Signature{{Sig: sig, Keyid: "a hint that matches nothing"}},
		}},
	}
	data, err := protojson.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// messageBundle is a sigstore bundle of a signature over digest (raw).
func messageBundle(t *testing.T, sv signature.SignerVerifier, digest []byte) []byte {
	t.Helper()
	sig, err := sv.SignMessage(bytes.NewReader(nil), options.WithDigest(digest))
	if err != nil {
		t.Fatal(err)
	}
	b := &protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: digest},
			Signature:     sig,
		}},
	}
	data, err := protojson.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestBundleVerifier: bundles signed by the key for the image are
// accepted; by another key, or for another digest, refused in one line.
func TestBundleVerifier(t *testing.T) {
	sv, pem := testKey(t)
	other, otherPEM := testKey(t)
	bv, err := NewBundleVerifier([]Key{{Path: "other.pub", Data: otherPEM}, {Path: "release.pub", Data: pem}})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("image"))
	img := hex.EncodeToString(sum[:])
	elseSum := sha256.Sum256([]byte("another image"))
	for _, tc := range []struct {
		name   string
		bundle []byte
		want   string // "" accepted (by release.pub)
	}{
		{"statement by the key", dsseBundle(t, sv, img), ""},
		{"statement by another key", dsseBundle(t, other, img), ""},
		{"statement about another image", dsseBundle(t, sv, hex.EncodeToString(elseSum[:])), "its statement is about sha256:" + hex.EncodeToString(elseSum[:])},
		{"signature over the digest", messageBundle(t, sv, sum[:]), ""},
		{"signature over another digest", messageBundle(t, sv, elseSum[:]), "it signs sha2_256:" + hex.EncodeToString(elseSum[:])},
	} {
		signer, err := bv.Verify(tc.bundle, "sha256:"+img)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Verify = %v, want accepted", tc.name, err)
		case tc.want == "" && !strings.HasSuffix(signer, ".pub"):
			t.Errorf("%s: signer %q", tc.name, signer)
		case tc.want != "" && (!errors.Is(err, ErrBundleRefused) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: Verify = %v, want refused with %q", tc.name, err, tc.want)
		}
	}
	// Only the other key: the release key's bundles are refused.
	only, err := NewBundleVerifier([]Key{{Path: "other.pub", Data: otherPEM}})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{dsseBundle(t, sv, img), messageBundle(t, sv, sum[:])} {
		if _, err := only.Verify(b, "sha256:"+img); !errors.Is(err, ErrBundleRefused) || !strings.Contains(err.Error(), "signed by none of the keys") {
			t.Errorf("Verify(another key's bundle) = %v, want refused", err)
		}
	}
}

// TestBundleVerifierRefuses: what is not a bundle, or a digest that is not
// sha256, is refused in one line (real bundles, signed by cosign with the
// right and another key, are verified in the mirror e2e test).
func TestBundleVerifierRefuses(t *testing.T) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := cryptoutils.MarshalPublicKeyToPEM(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	bv, err := NewBundleVerifier([]Key{{Path: "k.pub", Data: pem}})
	if err != nil {
		t.Fatal(err)
	}
	good := "sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name, data, digest, want string
	}{
		{"not JSON", "{", good, "not a sigstore bundle"},
		{"not a bundle", `{"mediaType":"application/json"}`, good, "not a sigstore bundle"},
		{"empty bundle", `{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`, good, "not a sigstore bundle"},
		{"digest not sha256", `{}`, "sha512:" + strings.Repeat("ab", 64), "is not a sha256 digest"},
		{"short digest", `{}`, "sha256:abcd", "is not a sha256 digest"},
	} {
		_, err := bv.Verify([]byte(tc.data), tc.digest)
		if !errors.Is(err, ErrBundleRefused) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Verify = %v, want one line with %q", tc.name, err, tc.want)
		}
	}
	if _, err := NewBundleVerifier([]Key{{Path: "x.pub", Data: []byte("not a key")}}); !errors.Is(err, ErrBadKey) {
		t.Errorf("NewBundleVerifier(not a key) = %v, want ErrBadKey", err)
	}
}
