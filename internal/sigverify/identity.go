package sigverify

import (
	"errors"
	"fmt"
	"net/mail"
	"path/filepath"
	"strings"

	"github.com/containers/image/v5/signature"
)

// Identity is who must have signed, by certificate rather than by key: a
// keyless (Fulcio) identity, an OIDC issuer and the e-mail address it
// vouched for, with the Rekor key whose signed entry timestamp dates the
// short-lived certificate; or an X.509 identity under a PKI of the user's
// (roots and intermediates), an e-mail address or a host name, checked at
// the current time. These are containers/image's sigstoreSigned "fulcio"
// and "pki" rules, which a device evaluates too; the flags take cosign's
// names.
type Identity struct {
	// Subject is --certificate-identity: the certificate's e-mail
	// address (Fulcio, PKI) or, under a PKI, a host name.
	Subject string
	// Issuer is --certificate-oidc-issuer (Fulcio).
	Issuer string
	// FulcioCA is --fulcio-ca: PEM certificates of the CA that issued
	// the signing certificates (the Fulcio root and intermediates).
	FulcioCA string
	// RekorKey is --rekor-key: the transparency log's PEM public key.
	RekorKey string
	// CARoots and CAIntermediates are --ca-roots and --ca-intermediates:
	// PEM certificates of a PKI.
	CARoots, CAIntermediates string
}

// Enabled reports whether any identity flag was given.
func (id Identity) Enabled() bool { return id != Identity{} }

// Fulcio reports whether the identity is a keyless one.
func (id Identity) Fulcio() bool { return id.FulcioCA != "" || id.Issuer != "" || id.RekorKey != "" }

// Validate checks the combination of the flags, without reading files:
// what containers/image accepts, said in the flags' terms.
func (id Identity) Validate() error {
	if !id.Enabled() {
		return nil
	}
	pki := id.CARoots != "" || id.CAIntermediates != ""
	switch {
	case id.Fulcio() && pki:
		return errors.New("--ca-roots/--ca-intermediates (a PKI's certificates) and --fulcio-ca/--certificate-oidc-issuer/--rekor-key (keyless) both say what issued the certificates: give one")
	case id.Subject == "":
		return errors.New("--certificate-identity is required with a certificate rule: the e-mail address (or, under --ca-roots, host name) the signing certificate must name")
	case !id.Fulcio() && !pki:
		return errors.New("--certificate-identity needs the CA that issued the certificate: --fulcio-ca with --certificate-oidc-issuer and --rekor-key (keyless), or --ca-roots (a PKI)")
	case id.Fulcio() && id.FulcioCA == "":
		return errors.New("--fulcio-ca is required for a keyless identity: the PEM certificates of the Fulcio CA that issued the signing certificates")
	case id.Fulcio() && id.Issuer == "":
		return errors.New("--certificate-oidc-issuer is required with --fulcio-ca: the OIDC issuer the certificate must name (https://accounts.google.com, https://token.actions.githubusercontent.com, …)")
	case id.Fulcio() && id.RekorKey == "":
		return errors.New("--rekor-key is required with --fulcio-ca: Fulcio certificates live minutes, so containers/image dates the signature by the Rekor entry's signed timestamp; give the transparency log's public key")
	case pki && id.CARoots == "":
		return errors.New("--ca-intermediates needs --ca-roots: the PKI's root certificates")
	}
	if id.Fulcio() {
		if strings.Contains(id.Subject, "://") {
			return fmt.Errorf("--certificate-identity %q: a URI identity (a CI workflow's) cannot be checked: containers/image, here and on the device, matches a Fulcio certificate's e-mail address only", id.Subject)
		}
		if _, err := mail.ParseAddress(id.Subject); err != nil || strings.ContainsAny(id.Subject, "<> ") {
			return fmt.Errorf("--certificate-identity %q: not an e-mail address, which is what containers/image matches in a Fulcio certificate", id.Subject)
		}
	}
	return nil
}

// emailSubject reports whether a PKI subject is an e-mail address (else a
// host name).
func emailSubject(s string) bool { return strings.Contains(s, "@") }

// IdentityFile is a file an identity names, and where it goes on a device.
type IdentityFile struct {
	// Flag is the flag that named it (--fulcio-ca, …).
	Flag string
	// Path is the file as the user named it.
	Path string
	// Name is its name on the device, within the trust directory
	// (<base name>.pem for certificates, .pub for a key).
	Name string
	// Data is its content, checked.
	Data []byte
	kind fileKind
}

// ReadIdentityFiles reads every file id names through the input gate and
// checks each is what its flag wants (PEM certificates, an ECDSA Rekor
// key); two files that would have one name on the device are refused.
func ReadIdentityFiles(id Identity) ([]IdentityFile, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	var files []IdentityFile
	var r policyFileReader
	add := func(flag, path string, kind fileKind, ext string) error {
		if path == "" {
			return nil
		}
		data, err := r.read(PolicyFile{Field: flag, Path: path, kind: kind})
		if err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
		f := IdentityFile{Flag: flag, Path: path, Name: keyName(path) + ext, Data: data, kind: kind}
		for _, o := range files {
			if o.Name == f.Name {
				return fmt.Errorf("%s %s and %s %s would both be installed as %s: rename one", o.Flag, o.Path, flag, path, f.Name)
			}
		}
		files = append(files, f)
		return nil
	}
	for _, f := range []struct {
		flag, path string
		kind       fileKind
		ext        string
	}{
		{"--fulcio-ca", id.FulcioCA, certFile, ".pem"},
		{"--rekor-key", id.RekorKey, rekorKeyFile, ".pub"},
		{"--ca-roots", id.CARoots, certFile, ".pem"},
		{"--ca-intermediates", id.CAIntermediates, certFile, ".pem"},
	} {
		if err := add(f.flag, f.path, f.kind, f.ext); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// IdentityTrust is the policy for an identity: every scope requires a
// sigstore signature whose certificate is id's, for the image's own
// repository (matchRepository), and everything else is rejected. files
// are ReadIdentityFiles's; path says where a file is on the machine that
// evaluates the policy (the device); nil embeds the files' data, for
// checking here. accept is as for KeyTrust.
func IdentityTrust(id Identity, files []IdentityFile, scopes []string, path func(IdentityFile) string, accept ...Scope) (*Trust, error) {
	byFlag := map[string]IdentityFile{}
	for _, f := range files {
		byFlag[f.Flag] = f
	}
	var opts []signature.PRSigstoreSignedOption
	if id.Fulcio() {
		ca, rekor := byFlag["--fulcio-ca"], byFlag["--rekor-key"]
		fopts := []signature.PRSigstoreSignedFulcioOption{
			signature.PRSigstoreSignedFulcioWithOIDCIssuer(id.Issuer),
			signature.PRSigstoreSignedFulcioWithSubjectEmail(id.Subject),
		}
		if path != nil {
			fopts = append(fopts, signature.PRSigstoreSignedFulcioWithCAPath(path(ca)))
			opts = append(opts, signature.PRSigstoreSignedWithRekorPublicKeyPath(path(rekor)))
		} else {
			fopts = append(fopts, signature.PRSigstoreSignedFulcioWithCAData(ca.Data))
			opts = append(opts, signature.PRSigstoreSignedWithRekorPublicKeyData(rekor.Data))
		}
		fulcio, err := signature.NewPRSigstoreSignedFulcio(fopts...)
		if err != nil {
			return nil, fmt.Errorf("building the keyless rule: %w", err)
		}
		opts = append(opts, signature.PRSigstoreSignedWithFulcio(fulcio))
	} else {
		roots, inter := byFlag["--ca-roots"], byFlag["--ca-intermediates"]
		var popts []signature.PRSigstoreSignedPKIOption
		if emailSubject(id.Subject) {
			popts = append(popts, signature.PRSigstoreSignedPKIWithSubjectEmail(id.Subject))
		} else {
			popts = append(popts, signature.PRSigstoreSignedPKIWithSubjectHostname(id.Subject))
		}
		if path != nil {
			popts = append(popts, signature.PRSigstoreSignedPKIWithCARootsPath(path(roots)))
			if inter.Path != "" {
				popts = append(popts, signature.PRSigstoreSignedPKIWithCAIntermediatesPath(path(inter)))
			}
		} else {
			popts = append(popts, signature.PRSigstoreSignedPKIWithCARootsData(roots.Data))
			if inter.Path != "" {
				popts = append(popts, signature.PRSigstoreSignedPKIWithCAIntermediatesData(inter.Data))
			}
		}
		pki, err := signature.NewPRSigstoreSignedPKI(popts...)
		if err != nil {
			return nil, fmt.Errorf("building the PKI rule: %w", err)
		}
		opts = append(opts, signature.PRSigstoreSignedWithPKI(pki))
	}
	opts = append(opts, signature.PRSigstoreSignedWithSignedIdentity(signature.NewPRMMatchRepository()))
	req, err := signature.NewPRSigstoreSigned(opts...)
	if err != nil {
		return nil, fmt.Errorf("building the policy for %s: %w", id.source(), err)
	}
	t, err := scopePolicy(req, scopes, accept)
	if err != nil {
		return nil, err
	}
	t.Source = id.source()
	return t, nil
}

// source names the identity in messages, as the flags gave it.
func (id Identity) source() string {
	if id.Fulcio() {
		return fmt.Sprintf("--certificate-identity %s --certificate-oidc-issuer %s (--fulcio-ca %s, --rekor-key %s)", id.Subject, id.Issuer, id.FulcioCA, id.RekorKey)
	}
	s := fmt.Sprintf("--certificate-identity %s (--ca-roots %s", id.Subject, id.CARoots)
	if id.CAIntermediates != "" {
		s += ", --ca-intermediates " + id.CAIntermediates
	}
	return s + ")"
}

// DevicePath is where an identity file is placed on a device, in dir.
func (f IdentityFile) DevicePath(dir string) string { return filepath.Join(dir, f.Name) }
