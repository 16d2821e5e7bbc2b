package testutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// The Fulcio certificate extensions of the OIDC issuer (sigstore's OID
// arc 1.3.6.1.4.1.57264.1): v1 holds the raw string, v2 a DER UTF8String.
var (
	oidIssuerV1 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}
	oidIssuerV2 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}
)

// TestSigstore is a sigstore of the tests' own, offline: a CA that acts as
// Fulcio (or as the root of a PKI) and a Rekor log key that signs entry
// timestamps. It makes what `cosign attach signature` attaches: a payload
// signed with a certificate it issues, and for keyless signatures the
// Rekor bundle (hashedrekord entry and signed entry timestamp) that
// containers/image and cosign check offline.
type TestSigstore struct {
	// CAPath is the CA's certificate (PEM): --fulcio-ca, --ca-roots.
	CAPath string
	// RekorKeyPath is the Rekor public key (PEM): --rekor-key.
	RekorKeyPath string

	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	rekor  *ecdsa.PrivateKey
	serial atomic.Int64
}

// NewTestSigstore makes the CA and the Rekor key in a temporary directory.
func NewTestSigstore(t testing.TB) *TestSigstore {
	t.Helper()
	s := &TestSigstore{dir: t.TempDir()}
	var err error
	if s.caKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{Organization: []string{"microshift-compose tests"}, CommonName: "test fulcio"},
		NotBefore:             time.Now().Add(-24 * time.Hour),
		NotAfter:              time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &s.caKey.PublicKey, s.caKey)
	if err != nil {
		t.Fatal(err)
	}
	if s.ca, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	s.CAPath = s.write(t, "fulcio.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	if s.rekor, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	s.RekorKeyPath = s.write(t, "rekor.pub", publicPEM(t, &s.rekor.PublicKey))
	s.serial.Store(1)
	return s
}

func (s *TestSigstore) write(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(s.dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func publicPEM(t testing.TB, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// CertSpec is the signing certificate to issue.
type CertSpec struct {
	// Email is the subject's e-mail address (SAN), Hostname a DNS SAN.
	Email, Hostname string
	// Issuer is the OIDC issuer (the Fulcio extensions); empty for a
	// PKI certificate.
	Issuer string
	// NotBefore and NotAfter bound the certificate; zero: from a minute
	// ago for ten minutes, as Fulcio issues them.
	NotBefore, NotAfter time.Time
}

// SignatureFiles are the files of one signature, as `cosign attach
// signature` takes them.
type SignatureFiles struct {
	Payload, Signature, Certificate, Chain string
	// Bundle is the Rekor bundle (--rekor-response); empty without one.
	Bundle string
}

// Sign signs payload (cosign generate's simple-signing payload) with a new
// key certified by the CA as c says. With a non-zero logged time, it
// also logs the signature: a hashedrekord entry integrated at that time,
// its timestamp signed with the Rekor key. The files are written to a new
// directory named name.
func (s *TestSigstore) Sign(t testing.TB, name string, payload []byte, c CertSpec, logged time.Time) SignatureFiles {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if c.NotBefore.IsZero() {
		c.NotBefore = time.Now().Add(-time.Minute)
	}
	if c.NotAfter.IsZero() {
		c.NotAfter = c.NotBefore.Add(10 * time.Minute)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(s.serial.Add(1)),
		NotBefore:    c.NotBefore,
		NotAfter:     c.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
	}
	if c.Email != "" {
		tmpl.EmailAddresses = []string{c.Email}
	}
	if c.Hostname != "" {
		tmpl.DNSNames = []string{c.Hostname}
	}
	if c.Issuer != "" {
		v2, err := asn1.MarshalWithParams(c.Issuer, "utf8")
		if err != nil {
			t.Fatal(err)
		}
		tmpl.ExtraExtensions = []pkix.Extension{{Id: oidIssuerV1, Value: []byte(c.Issuer)}, {Id: oidIssuerV2, Value: v2}}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.ca, &key.PublicKey, s.caKey)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	digest := sha256.Sum256(payload)
	sig, err := ecdsa.SignASN1(rand.Reader, key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(s.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(n string, data []byte) string {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f := SignatureFiles{
		Payload:     write("payload.json", payload),
		Signature:   write("signature", []byte(base64.StdEncoding.EncodeToString(sig))),
		Certificate: write("cert.pem", certPEM),
		Chain:       write("chain.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.ca.Raw})),
	}
	if !logged.IsZero() {
		f.Bundle = write("bundle.json", s.rekorBundle(t, sig, certPEM, digest[:], logged))
	}
	return f
}

// rekorBundle is cosign's bundle file of the signature, with the Rekor
// bundle of a hashedrekord v0.0.1 entry for it: the entry (body, integrated time, index, log ID) and
// the Rekor key's signature over its canonical JSON (RFC 8785: keys
// sorted, no space; json.Marshal of a map of strings and integers is
// that).
func (s *TestSigstore) rekorBundle(t testing.TB, sig, certPEM, digest []byte, at time.Time) []byte {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"apiVersion": "0.0.1",
		"kind":       "hashedrekord",
		"spec": map[string]any{
			"data": map[string]any{"hash": map[string]string{"algorithm": "sha256", "value": hex.EncodeToString(digest)}},
			"signature": map[string]any{
				"content":   base64.StdEncoding.EncodeToString(sig),
				"publicKey": map[string]string{"content": base64.StdEncoding.EncodeToString(certPEM)},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	spki, err := x509.MarshalPKIXPublicKey(&s.rekor.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	logID := sha256.Sum256(spki)
	payload, err := json.Marshal(map[string]any{
		"body":           base64.StdEncoding.EncodeToString(body),
		"integratedTime": at.Unix(),
		"logIndex":       s.serial.Load(),
		"logID":          hex.EncodeToString(logID[:]),
	})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(payload)
	set, err := ecdsa.SignASN1(rand.Reader, s.rekor, h[:])
	if err != nil {
		t.Fatal(err)
	}
	// The file cosign sign-blob --bundle writes, which cosign attach
	// signature --rekor-response reads.
	bundle, err := json.Marshal(map[string]any{
		"base64Signature": base64.StdEncoding.EncodeToString(sig),
		"cert":            base64.StdEncoding.EncodeToString(certPEM),
		"rekorBundle":     map[string]any{"SignedEntryTimestamp": set, "Payload": json.RawMessage(payload)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return bundle
}
