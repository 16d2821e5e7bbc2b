package inputfile

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
)

// ReadCA reads a PEM file of CA certificates: only certificates, at least
// one, each one that parses. A private key in it is refused: it would end
// up on every device.
func ReadCA(flag, path string) ([]byte, error) {
	data, err := Read("CA certificate", path, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	rest, n := data, 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			if strings.Contains(block.Type, "PRIVATE KEY") {
				return nil, fmt.Errorf("%s %s: it holds a private key, which must not go to the device; give the CA certificate only", flag, path)
			}
			return nil, fmt.Errorf("%s %s: a %q PEM block; want CERTIFICATE blocks only", flag, path, block.Type)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return nil, fmt.Errorf("%s %s: certificate %d: %v", flag, path, n+1, err)
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("%s %s: no PEM certificate in it", flag, path)
	}
	return data, nil
}
