package attest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	"github.com/sigstore/sigstore/pkg/signature/options"
)

// A blob signature is what `cosign sign-blob --key KEY --output-signature
// FILE.sig FILE` writes: the key's signature over the file's bytes (ECDSA
// and RSA over their SHA-256; Ed25519 over the bytes themselves), base64
// encoded, no newline. `cosign verify-blob --key cosign.pub --signature
// FILE.sig --insecure-ignore-tlog FILE` checks it, and so does VerifyBlob.

// SignatureSuffix names a blob's signature beside it: FILE.sig, as cosign's
// documentation names it.
const SignatureSuffix = ".sig"

// maxBlobSignature bounds a signature file: an RSA-4096 signature in
// base64 is under 700 bytes.
const maxBlobSignature = 16 << 10

// ErrUnsigned is wrapped when a blob has no signature beside it.
var ErrUnsigned = errors.New("not signed")

// Opener reopens a blob, for the keys that sign the bytes and not their
// digest (Ed25519).
type Opener func() (io.ReadCloser, error)

// SignBlob signs a blob whose SHA-256 is digest, as cosign sign-blob
// does, and returns the base64 signature. Hashing is the caller's, done
// once as the blob is written; only an Ed25519 key, which signs the bytes
// themselves, reads the blob again through open.
func (s *Signer) SignBlob(ctx context.Context, digest []byte, open Opener) ([]byte, error) {
	var sig []byte
	var err error
	if _, ed := s.Public().(ed25519.PublicKey); ed {
		r, oerr := open()
		if oerr != nil {
			return nil, fmt.Errorf("signing with %s: %w", s.Path, oerr)
		}
		sig, err = s.sv.SignMessage(r, options.WithContext(ctx))
		r.Close()
	} else {
		if len(digest) != sha256.Size {
			return nil, fmt.Errorf("signing with %s: a %d-byte digest, not SHA-256's", s.Path, len(digest))
		}
		sig, err = s.sv.SignMessage(bytes.NewReader(nil), options.WithContext(ctx), options.WithDigest(digest))
	}
	if err != nil {
		return nil, fmt.Errorf("signing with %s: %w", s.Path, err)
	}
	return []byte(base64.StdEncoding.EncodeToString(sig)), nil
}

// DecodeBlobSignature decodes a signature file as cosign verify-blob
// reads it: base64 (white space around it ignored). display names the
// file in messages.
func DecodeBlobSignature(display string, data []byte) ([]byte, error) {
	if len(data) > maxBlobSignature {
		return nil, fmt.Errorf("%s: %d bytes, more than a signature (at most %d)", display, len(data), maxBlobSignature)
	}
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return nil, fmt.Errorf("%s: empty, not a signature", display)
	}
	sig, err := base64.StdEncoding.DecodeString(string(t))
	if err != nil {
		return nil, fmt.Errorf("%s: not a base64 signature (cosign sign-blob's format): %v", display, err)
	}
	return sig, nil
}

// VerifyBlob checks sig (decoded, DecodeBlobSignature) over a blob whose
// SHA-256 is digest with any of the keys, and returns the key that
// verified it. open reads the blob again for Ed25519 keys only. A
// signature none of them verifies wraps ErrSignature.
func VerifyBlob(ctx context.Context, keys []*Verifier, sig, digest []byte, open Opener) (*Verifier, error) {
	if len(keys) == 0 {
		return nil, errors.New("no public key to verify with")
	}
	for _, v := range keys {
		var err error
		if _, ed := v.pub.(ed25519.PublicKey); ed {
			r, oerr := open()
			if oerr != nil {
				return nil, oerr
			}
			err = v.v.VerifySignature(bytes.NewReader(sig), r, options.WithContext(ctx))
			r.Close()
		} else {
			err = v.v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(nil), options.WithContext(ctx), options.WithDigest(digest))
		}
		if err == nil {
			return v, nil
		}
	}
	return nil, ErrSignature
}
