package airgap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/microshift-compose/microshift-compose/attest"
)

// A signed bundle (mirror --to oci-archive:FILE --sign-key KEY) carries a
// cosign sign-blob signature beside the file that vouches for all of it:
// FILE.sig over the archive's bytes, or, for a split archive, over its
// list FILE.parts.json (FILE.parts.json.sig), which holds every part's
// size and sha256 and is checked against the parts before any is read.
// `cosign verify-blob --key cosign.pub --signature FILE.sig
// --insecure-ignore-tlog FILE` accepts either. The archive is hashed once,
// as it is written; the signature is written after the archive is renamed
// into place, and an earlier signature is removed before, so that an
// archive never sits beside a signature of other bytes (a run killed in
// between leaves it unsigned, which verification refuses as such).

// SignFunc returns the key to sign an archive with; it is called when the
// archive is complete (decrypting a cosign key takes scrypt's time, which
// the copy hides).
type SignFunc func() (*attest.Signer, error)

// removeSignature removes the signature of signed left by an earlier run.
func removeSignature(signed string) error {
	if err := os.Remove(signed + attest.SignatureSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the earlier signature %s: %w", signed+attest.SignatureSuffix, err)
	}
	return nil
}

// writeSignature signs signed, whose sha256 is digest, and writes
// signed.sig (atomically).
func writeSignature(ctx context.Context, sign SignFunc, signed string, digest []byte, open attest.Opener) error {
	if sign == nil {
		return nil
	}
	s, err := sign()
	if err != nil {
		return err
	}
	sig, err := s.SignBlob(ctx, digest, open)
	if err != nil {
		return fmt.Errorf("signing %s: %w", signed, err)
	}
	if err := writeFileAtomic(signed+attest.SignatureSuffix, sig); err != nil {
		return fmt.Errorf("writing %s: %w", signed+attest.SignatureSuffix, err)
	}
	return nil
}

// bytesOpener reopens data.
func bytesOpener(data []byte) attest.Opener {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
}
