package sigverify

import (
	"crypto"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// ErrBundleRefused is wrapped when a sigstore bundle attached to an image
// does not verify: malformed, signed by none of the keys, or signed for
// another digest.
var ErrBundleRefused = errors.New("sigstore bundle refused")

// BundleVerifier checks sigstore bundles (what cosign --new-bundle-format
// and cosign v3 attach to images as OCI 1.1 referrers) with public keys,
// through sigstore-go, offline: no transparency log and no timestamp
// authority are required, the keys are trusted at the current time (as
// cosign verify --key --insecure-ignore-tlog does).
type BundleVerifier struct {
	verifiers []*verify.SignedEntityVerifier
	paths     []string
}

// NewBundleVerifier loads keys (read by ReadKeys).
func NewBundleVerifier(keys []Key) (*BundleVerifier, error) {
	bv := &BundleVerifier{}
	for _, k := range keys {
		pub, err := cryptoutils.UnmarshalPEMToPublicKey(k.Data)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w: %s", k.Path, ErrBadKey, oneLine(err.Error()))
		}
		sv, err := signature.LoadVerifier(pub, crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w: %s", k.Path, ErrBadKey, oneLine(err.Error()))
		}
		key := root.NewExpiringKey(sv, time.Time{}, time.Time{})
		material := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) { return key, nil })
		v, err := verify.NewSignedEntityVerifier(material, verify.WithCurrentTime())
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", k.Path, err)
		}
		bv.verifiers = append(bv.verifiers, v)
		bv.paths = append(bv.paths, k.Path)
	}
	if len(bv.verifiers) == 0 {
		return nil, errors.New("no key to verify sigstore bundles with")
	}
	return bv, nil
}

// Verify checks that data is a sigstore bundle signed by one of the keys
// for the image with digest ("sha256:HEX"): a DSSE statement naming it as
// a subject, or a signature over it. It returns the key's path.
func (bv *BundleVerifier) Verify(data []byte, digest string) (string, error) {
	alg, hexDigest, ok := strings.Cut(digest, ":")
	raw, err := hex.DecodeString(hexDigest)
	if !ok || alg != "sha256" || err != nil || len(raw) != 32 {
		return "", fmt.Errorf("%w: %q is not a sha256 digest", ErrBundleRefused, digest)
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		return "", fmt.Errorf("%w: not a sigstore bundle: %s", ErrBundleRefused, oneLine(err.Error()))
	}
	var first error
	for i, v := range bv.verifiers {
		_, err := v.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest(alg, raw), verify.WithKey()))
		if err == nil {
			return bv.paths[i], nil
		}
		if first == nil {
			first = err
		}
	}
	return "", fmt.Errorf("%w: signed by none of the keys for %s: %s", ErrBundleRefused, digest, oneLine(first.Error()))
}
