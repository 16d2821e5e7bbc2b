package attest

import (
	"bytes"
	"crypto"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/microshift-compose/microshift-compose/internal/inputfile"
	"github.com/microshift-compose/microshift-compose/internal/sigverify"
)

// PasswordEnv is the environment variable the private key's password is
// read from, as cosign reads it. Unset, the password is empty (what
// `COSIGN_PASSWORD= cosign generate-key-pair` encrypts with): a password
// is never a flag, where ps and shell history would show it.
const PasswordEnv = "COSIGN_PASSWORD"

// maxKeyFile bounds a key file: an RSA-4096 key in cosign's encrypted PEM
// is under 4 KiB.
const maxKeyFile = 64 << 10

// The PEM block types of cosign's encrypted private keys: the one cosign
// writes today and the one it wrote before v1.
const (
	sigstorePrivateKeyType = string(cryptoutils.EncryptedSigstorePrivateKeyPEMType)
	cosignPrivateKeyType   = "ENCRYPTED COSIGN PRIVATE KEY"
)

// Sentinels wrapped by the key loaders' errors, for errors.Is.
var (
	// ErrNotKey: the file is no key of the kind asked for (no PEM, a
	// certificate, an unsupported block).
	ErrNotKey = errors.New("not a cosign key")
	// ErrPublicKey: a public key where the private key that signs belongs.
	ErrPublicKey = errors.New("holds a public key")
	// ErrPrivateKey: a private key where a public key belongs (the
	// sigverify sentinel, so that every public key the tool reads says
	// so alike).
	ErrPrivateKey = sigverify.ErrPrivateKey
	// ErrPassword: the password does not decrypt the private key.
	ErrPassword = errors.New("wrong password")
)

// Signer signs with a private key read from a cosign key file.
type Signer struct {
	sv signature.SignerVerifier
	// Path is the key file it was read from, for messages.
	Path string
}

// Public is the signer's public key.
func (s *Signer) Public() crypto.PublicKey {
	pub, _ := s.sv.PublicKey()
	return pub
}

// LoadSigner reads the cosign private key at path and decrypts it with
// password (see PasswordEnv).
func LoadSigner(path string, password []byte) (*Signer, error) {
	k, err := ReadSigningKey(path)
	if err != nil {
		return nil, err
	}
	return k.Decrypt(password)
}

// ParseSigner is LoadSigner on the file's bytes; display names the file
// in messages.
func ParseSigner(display string, data, password []byte) (*Signer, error) {
	k, err := ParseSigningKey(display, data)
	if err != nil {
		return nil, err
	}
	return k.Decrypt(password)
}

// SigningKey is a cosign private key file read and checked, not yet
// decrypted: decrypting is scrypt's work (cosign's parameters: tens to
// hundreds of milliseconds, 32 MiB), which a caller may run beside other
// work once the file is known to be a key.
type SigningKey struct {
	block   *pem.Block
	display string
}

// ReadSigningKey reads the cosign private key file at path and checks that
// it is one: one PEM block of cosign's encrypted private key type.
func ReadSigningKey(path string) (*SigningKey, error) {
	data, err := inputfile.Read("signing key", path, maxKeyFile)
	if err != nil {
		return nil, err
	}
	return ParseSigningKey(path, data)
}

// ParseSigningKey is ReadSigningKey on the file's bytes; display names the
// file in messages.
func ParseSigningKey(display string, data []byte) (*SigningKey, error) {
	b, err := onePEMBlock(data)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w: %v; cosign generate-key-pair writes one (cosign.key)", display, ErrNotKey, err)
	}
	switch {
	case b.Type == sigstorePrivateKeyType || b.Type == cosignPrivateKeyType:
	case b.Type == "PUBLIC KEY" || b.Type == "RSA PUBLIC KEY":
		return nil, fmt.Errorf("signing key %s %w: signing takes the private key (cosign.key), its public key (cosign.pub) verifies", display, ErrPublicKey)
	case strings.HasSuffix(b.Type, "PRIVATE KEY"):
		return nil, fmt.Errorf("signing key %s: %w: an unencrypted %s block; cosign keys are encrypted: convert it with 'cosign import-key-pair --key %s'", display, ErrNotKey, b.Type, display)
	default:
		return nil, fmt.Errorf("signing key %s: %w: a %s block, not cosign's %s", display, ErrNotKey, b.Type, sigstorePrivateKeyType)
	}
	return &SigningKey{block: b, display: display}, nil
}

// Decrypt decrypts the key with password; nil is a password that was not
// given ($COSIGN_PASSWORD unset), tried as the empty one, which cosign
// generate-key-pair writes keys with when asked to.
func (k *SigningKey) Decrypt(password []byte) (*Signer, error) {
	unset := password == nil
	if unset {
		password = []byte{}
	}
	priv, err := cryptoutils.UnmarshalPEMToPrivateKey(pem.EncodeToMemory(k.block), func(bool) ([]byte, error) { return password, nil })
	if err != nil {
		if strings.Contains(err.Error(), "decryption failed") {
			if unset {
				return nil, fmt.Errorf("signing key %s: %w: $%s is not set, and the key has a password: set %s to it", k.display, ErrPassword, PasswordEnv, PasswordEnv)
			}
			return nil, fmt.Errorf("signing key %s: %w: %s does not decrypt it", k.display, ErrPassword, PasswordEnv)
		}
		return nil, fmt.Errorf("signing key %s: %w: %v", k.display, ErrNotKey, oneLine(err))
	}
	sv, err := signature.LoadSignerVerifier(priv, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w: %v", k.display, ErrNotKey, oneLine(err))
	}
	return &Signer{sv: sv, Path: k.display}, nil
}

// Verifier checks signatures with a public key.
type Verifier struct {
	v   signature.Verifier
	pub crypto.PublicKey
	// Path is the key file it was read from, for messages.
	Path string
}

// LoadVerifier reads the PEM public key at path (cosign.pub): exactly one
// public key, as sigverify.CheckPublicKey accepts for --verify-key.
func LoadVerifier(path string) (*Verifier, error) {
	data, err := inputfile.Read("public key", path, maxKeyFile)
	if err != nil {
		return nil, err
	}
	return ParseVerifier(path, data)
}

// ParseVerifier is LoadVerifier on the file's bytes; display names the
// file in messages.
func ParseVerifier(display string, data []byte) (*Verifier, error) {
	if err := sigverify.CheckPublicKey(data); err != nil {
		if errors.Is(err, sigverify.ErrPrivateKey) {
			return nil, fmt.Errorf("public key %s %w: verifying takes the public key (cosign.pub), never the private one", display, ErrPrivateKey)
		}
		return nil, fmt.Errorf("public key %s: %w: %v", display, ErrNotKey, err)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("public key %s: %w: %v", display, ErrNotKey, oneLine(err))
	}
	return NewVerifier(display, pub)
}

// NewVerifier checks signatures with pub, the way cosign does for its key
// types (ECDSA and RSA PKCS#1 v1.5 over SHA-256, Ed25519).
func NewVerifier(display string, pub crypto.PublicKey) (*Verifier, error) {
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("public key %s: %w: %v", display, ErrNotKey, oneLine(err))
	}
	return &Verifier{v: v, pub: pub, Path: display}, nil
}

// onePEMBlock decodes the one PEM block data holds, with nothing but
// white space around it.
func onePEMBlock(data []byte) (*pem.Block, error) {
	trimmed := bytes.TrimSpace(data)
	if !bytes.HasPrefix(trimmed, []byte("-----BEGIN ")) {
		return nil, errors.New("no PEM block")
	}
	b, rest := pem.Decode(trimmed)
	if b == nil {
		return nil, errors.New("a PEM block that does not decode")
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, fmt.Errorf("more than the %s block", b.Type)
	}
	return b, nil
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
