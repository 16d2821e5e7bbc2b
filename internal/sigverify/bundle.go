package sigverify

import (
	"bytes"
	"context"
	"crypto"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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

// ErrBundleRefused is wrapped when a sigstore bundle attached to an image
// does not verify: malformed, signed by none of the keys, or signed for
// another digest.
var ErrBundleRefused = errors.New("sigstore bundle refused")

// inTotoPayloadType is the DSSE payload type of an in-toto statement.
const inTotoPayloadType = "application/vnd.in-toto+json"

// BundleVerifier checks sigstore bundles (what cosign --new-bundle-format
// and cosign v3 attach to images as OCI 1.1 referrers) with public keys,
// offline: the bundle is read with the sigstore protobuf-specs types, a
// DSSE envelope verified with go-securesystemslib's DSSE verifier over
// sigstore's signature verifiers, a message signature with sigstore's
// verifier; no transparency log or timestamp is required (as cosign
// verify --key --insecure-ignore-tlog). sigstore-go is not used: through
// rekor it links viper, cobra and pflag into the library packages and
// more than the startup budget allows (see docs/signatures.md, "What is attached travels").
type BundleVerifier struct {
	keys []bundleKey
}

type bundleKey struct {
	path string
	sv   signature.Verifier
	pub  crypto.PublicKey
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
		bv.keys = append(bv.keys, bundleKey{path: k.Path, sv: sv, pub: pub})
	}
	if len(bv.keys) == 0 {
		return nil, errors.New("no key to verify sigstore bundles with")
	}
	return bv, nil
}

// Verify checks that data is a sigstore bundle signed by one of the keys
// for the image with digest ("sha256:HEX"): a DSSE in-toto statement
// naming it as a subject, or a message signature over it. It returns the
// key's path.
func (bv *BundleVerifier) Verify(data []byte, digest string) (string, error) {
	alg, hexDigest, ok := strings.Cut(digest, ":")
	raw, err := hex.DecodeString(hexDigest)
	if !ok || alg != "sha256" || err != nil || len(raw) != 32 {
		return "", fmt.Errorf("%w: %q is not a sha256 digest", ErrBundleRefused, digest)
	}
	var b protobundle.Bundle
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, &b); err != nil {
		return "", fmt.Errorf("%w: not a sigstore bundle: %s", ErrBundleRefused, oneLine(err.Error()))
	}
	if !strings.HasPrefix(b.GetMediaType(), "application/vnd.dev.sigstore.bundle") {
		return "", fmt.Errorf("%w: not a sigstore bundle: media type %q", ErrBundleRefused, b.GetMediaType())
	}
	switch {
	case b.GetDsseEnvelope() != nil:
		return bv.verifyDSSE(b.GetDsseEnvelope().GetPayloadType(), b.GetDsseEnvelope().GetPayload(), b.GetDsseEnvelope().GetSignatures(), hexDigest)
	case b.GetMessageSignature() != nil:
		return bv.verifyMessage(b.GetMessageSignature(), raw, digest)
	}
	return "", fmt.Errorf("%w: not a sigstore bundle: neither a DSSE envelope nor a message signature", ErrBundleRefused)
}

func (bv *BundleVerifier) verifyDSSE(payloadType string, payload []byte, sigs []*protodsse.Signature, hexDigest string) (string, error) {
	if payloadType != inTotoPayloadType {
		return "", fmt.Errorf("%w: the DSSE payload is %q, not an in-toto statement", ErrBundleRefused, payloadType)
	}
	env := &ssldsse.Envelope{PayloadType: payloadType, Payload: base64.StdEncoding.EncodeToString(payload)}
	for _, s := range sigs {
		// The key ID is an unauthenticated hint: every key is tried.
		env.Signatures = append(env.Signatures, ssldsse.Signature{Sig: base64.StdEncoding.EncodeToString(s.GetSig())})
	}
	var signer string
	for _, k := range bv.keys {
		ev, err := ssldsse.NewEnvelopeVerifier(&sigdsse.VerifierAdapter{SignatureVerifier: k.sv, Pub: k.pub})
		if err != nil {
			return "", err
		}
		if _, err := ev.Verify(context.Background(), env); err == nil {
			signer = k.path
			break
		}
	}
	if signer == "" {
		return "", fmt.Errorf("%w: signed by none of the keys", ErrBundleRefused)
	}
	var st struct {
		Subject []struct {
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
	}
	if err := json.Unmarshal(payload, &st); err != nil {
		return "", fmt.Errorf("%w: its in-toto statement: %s", ErrBundleRefused, oneLine(err.Error()))
	}
	var named []string
	for _, s := range st.Subject {
		if s.Digest["sha256"] == hexDigest {
			return signer, nil
		}
		named = append(named, "sha256:"+s.Digest["sha256"])
	}
	return "", fmt.Errorf("%w: its statement is about %s, not sha256:%s", ErrBundleRefused, strings.Join(named, ", "), hexDigest)
}

func (bv *BundleVerifier) verifyMessage(ms *protocommon.MessageSignature, raw []byte, digest string) (string, error) {
	md := ms.GetMessageDigest()
	if md.GetAlgorithm() != protocommon.HashAlgorithm_SHA2_256 || !bytes.Equal(md.GetDigest(), raw) {
		return "", fmt.Errorf("%w: it signs %s:%x, not %s", ErrBundleRefused, strings.ToLower(md.GetAlgorithm().String()), md.GetDigest(), digest)
	}
	for _, k := range bv.keys {
		if err := k.sv.VerifySignature(bytes.NewReader(ms.GetSignature()), nil, options.WithDigest(raw)); err == nil {
			return k.path, nil
		}
	}
	return "", fmt.Errorf("%w: signed by none of the keys", ErrBundleRefused)
}
