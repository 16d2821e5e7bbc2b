package airgap

import (
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
