package sigverify

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	//lint:ignore SA1019 containers/image's own OpenPGP fallback reads signedBy keys with this package; we read them the same way.
	"golang.org/x/crypto/openpgp" //nolint:staticcheck
)

// ErrPrivateKey is wrapped when a file that must hold public keys or
// certificates holds a private key.
var ErrPrivateKey = errors.New("holds a private key")

// CheckPublicKey accepts exactly one PEM public key (PUBLIC KEY, as cosign
// writes it, or RSA PUBLIC KEY) with nothing but white space around it:
// no second block, no private key, no PEM headers, no text. A file that
// holds more would carry the rest wherever the key goes (the device's
// /etc/containers/sigstore, files/, the Containerfile), and containers/image
// and cosign read only the first block anyway.
func CheckPublicKey(data []byte) error {
	blocks, err := pemBlocks(data)
	if err != nil {
		return err
	}
	switch {
	case len(blocks) == 0:
		return errors.New("no PEM block")
	case len(blocks) > 1:
		return fmt.Errorf("%d PEM blocks (%s): a key file holds exactly one public key", len(blocks), blockTypes(blocks))
	}
	b := blocks[0]
	if len(b.Headers) > 0 {
		return fmt.Errorf("PEM headers in the %s block: a public key has none", b.Type)
	}
	if _, err := cryptoutils.UnmarshalPEMToPublicKey(pem.EncodeToMemory(b)); err != nil {
		return errors.New(oneLine(err.Error()))
	}
	return nil
}

// pemBlocks decodes every PEM block of data, refusing private keys and any
// text that is not white space outside the blocks.
func pemBlocks(data []byte) ([]*pem.Block, error) {
	var blocks []*pem.Block
	rest := data
	for {
		trimmed := bytes.TrimLeft(rest, " \t\r\n")
		if len(trimmed) == 0 {
			break
		}
		b, after := pem.Decode(trimmed)
		if b == nil || !bytes.HasPrefix(trimmed, []byte("-----BEGIN ")) {
			if bytes.Contains(trimmed, []byte("PRIVATE KEY")) {
				return nil, fmt.Errorf("%w: give the public key only", ErrPrivateKey)
			}
			if len(blocks) == 0 {
				return nil, errors.New("PEM decoding failed")
			}
			return nil, fmt.Errorf("data after the %s block", blocks[len(blocks)-1].Type)
		}
		if strings.Contains(b.Type, "PRIVATE KEY") {
			return nil, fmt.Errorf("%w (block %s): give the public key only", ErrPrivateKey, b.Type)
		}
		blocks = append(blocks, b)
		rest = after
	}
	return blocks, nil
}

func blockTypes(blocks []*pem.Block) string {
	var types []string
	for _, b := range blocks {
		types = append(types, b.Type)
	}
	return strings.Join(types, ", ")
}

// checkRekorKey is CheckPublicKey for a Rekor key, which containers/image
// takes in ECDSA only.
func checkRekorKey(data []byte) error {
	if err := CheckPublicKey(data); err != nil {
		return err
	}
	pk, _ := cryptoutils.UnmarshalPEMToPublicKey(data)
	if _, ok := pk.(*ecdsa.PublicKey); !ok {
		return errors.New("not an ECDSA key (containers/image takes Rekor keys in ECDSA only)")
	}
	return nil
}

// checkCertificates accepts PEM certificates, one or more, each of which
// parses; text between them (the comments of a system CA bundle) is
// allowed, a private key is not.
func checkCertificates(data []byte) error {
	if bytes.Contains(data, []byte("PRIVATE KEY-----")) {
		return fmt.Errorf("%w: give the certificates only", ErrPrivateKey)
	}
	n := 0
	for rest := data; ; {
		b, after := pem.Decode(rest)
		if b == nil {
			break
		}
		rest = after
		if b.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return fmt.Errorf("certificate %d: %s", n+1, oneLine(err.Error()))
		}
		n++
	}
	if n == 0 {
		return errors.New("no PEM certificate")
	}
	return nil
}

// gpgPublicKeys reads an OpenPGP keyring (binary, else ASCII-armored, the
// order containers/image tries them in) and returns its public keys
// serialized as a binary keyring: what a signedBy keyData holds. A keyring
// with no key, or with a secret key, is refused.
func gpgPublicKeys(data []byte) ([]byte, error) {
	ring, err := openpgp.ReadKeyRing(bytes.NewReader(data))
	if err != nil {
		var aerr error
		if ring, aerr = openpgp.ReadArmoredKeyRing(bytes.NewReader(data)); aerr != nil {
			return nil, fmt.Errorf("not an OpenPGP keyring: %s", oneLine(err.Error()))
		}
	}
	if len(ring) == 0 {
		return nil, errors.New("no OpenPGP key")
	}
	var out bytes.Buffer
	for _, e := range ring {
		if e.PrivateKey != nil {
			return nil, fmt.Errorf("%w (an OpenPGP secret key): export the public key only", ErrPrivateKey)
		}
		if err := e.Serialize(&out); err != nil {
			return nil, fmt.Errorf("reading the OpenPGP key: %s", oneLine(err.Error()))
		}
	}
	return out.Bytes(), nil
}
