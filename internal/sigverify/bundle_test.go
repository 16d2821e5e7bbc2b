package sigverify

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

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
