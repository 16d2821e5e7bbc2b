package airgap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/microshift-compose/microshift-compose/attest"
	"github.com/microshift-compose/microshift-compose/internal/inputfile"
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

// SignedFile is the file a signature of the archive file covers: file
// itself, or its list for a split archive.
func SignedFile(file string, split bool) string {
	if split {
		return file + PartsSuffix
	}
	return file
}

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

// ArchiveVerified is what VerifyArchive checked.
type ArchiveVerified struct {
	// Signed is the file the signature covers, Signature the signature
	// file, Key the public key that verified it.
	Signed, Signature, Key string
}

// VerifyArchive checks the signature of the archive src names (FILE, a
// split archive's FILE, FILE.001 or FILE.parts.json) with any of keys,
// reading the signed file once. An archive without a signature (ErrUnsigned),
// a signature none of the keys verifies (attest.ErrSignature: another key,
// or the archive changed after signing) and a layout directory, which
// carries no signature, are refused in one line naming the file.
func VerifyArchive(ctx context.Context, src Target, keys []*attest.Verifier) (*ArchiveVerified, error) {
	if src.Transport == TransportDocker {
		return nil, fmt.Errorf("%s: a registry carries no bundle signature", src)
	}
	base, split, err := splitFile(src.Path)
	if err != nil {
		return nil, err
	}
	if !split {
		base = src.Path
		st, err := os.Stat(base)
		switch {
		case err != nil:
			return nil, fmt.Errorf("verifying %s: %w", src, unwrapPath(err))
		case st.IsDir():
			return nil, fmt.Errorf("%s is a layout directory: only an oci-archive:FILE carries a bundle signature (FILE%s, written by mirror --to oci-archive:FILE --sign-key)", src, attest.SignatureSuffix)
		case !st.Mode().IsRegular():
			return nil, fmt.Errorf("verifying %s: not a regular file", src)
		}
	}
	signed := SignedFile(base, split)
	sigPath := signed + attest.SignatureSuffix
	data, err := inputfile.Read("signature", sigPath, 64<<10)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("oci-archive:%s: %w: no %s beside it (mirror --to oci-archive:FILE --sign-key KEY writes it)", base, attest.ErrUnsigned, filepath.Base(sigPath))
	}
	if err != nil {
		return nil, err
	}
	sig, err := attest.DecodeBlobSignature(sigPath, data)
	if err != nil {
		return nil, err
	}
	digest, err := hashFile(signed)
	if err != nil {
		return nil, err
	}
	open := func() (io.ReadCloser, error) { return os.Open(signed) }
	k, err := attest.VerifyBlob(ctx, keys, sig, digest, open)
	if err != nil {
		what := "the archive"
		if split {
			what = "its list of parts"
		}
		with := "the public key " + keys[0].Path
		if len(keys) > 1 {
			with = fmt.Sprintf("any of the %d public keys", len(keys))
		}
		return nil, fmt.Errorf("oci-archive:%s: %s: %w with %s: it was signed with another key, or %s changed after signing", base, filepath.Base(sigPath), attest.ErrSignature, with, what)
	}
	return &ArchiveVerified{Signed: signed, Signature: sigPath, Key: k.Path}, nil
}

// hashFile is the sha256 of a regular file, read once.
func hashFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("reading %s: not a regular file", path)
	}
	h := sha256.New()
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	if _, err := io.CopyBuffer(h, f, *bp); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, unwrapPath(err))
	}
	return h.Sum(nil), nil
}

// bytesOpener reopens data.
func bytesOpener(data []byte) attest.Opener {
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
}
