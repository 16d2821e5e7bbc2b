package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/microshift-compose/microshift-compose/airgap"
	"github.com/microshift-compose/microshift-compose/internal/lazyregexp"
	"github.com/microshift-compose/microshift-compose/internal/registryclient"
	"github.com/microshift-compose/microshift-compose/internal/sigverify"
	"github.com/microshift-compose/microshift-compose/internal/text"
	"github.com/microshift-compose/microshift-compose/plan"
	"github.com/microshift-compose/microshift-compose/render/trust"
)

// trustOptions are what an image must be signed with: a containers policy
// (--policy) or sigstore public keys (--verify-key). mirror and release
// verify check the images against it; build places it on the device.
type trustOptions struct {
	Policy string
	Keys   []string
	// Identity is the certificate identity (keyless or PKI) of cosign's
	// flags.
	Identity sigverify.Identity
}

// addIdentityFlags binds the certificate identity flags, cosign's names;
// what says what the rule is for.
func (o *trustOptions) addIdentityFlags(cmd *cobra.Command, what string) {
	f := cmd.Flags()
	f.StringVar(&o.Identity.Subject, "certificate-identity", "", "e-mail address the signing certificate must name (or, with --ca-roots, a host name): a sigstoreSigned rule with fulcio or pki (containers/image's), signedIdentity matchRepository, for every repository of the plan, everything else rejected; "+what)
	f.StringVar(&o.Identity.Issuer, "certificate-oidc-issuer", "", "OIDC issuer the keyless (Fulcio) certificate must name, with --fulcio-ca and --rekor-key")
	f.StringVar(&o.Identity.FulcioCA, "fulcio-ca", "", "PEM certificates of the Fulcio CA that issued keyless signing certificates (its root and intermediates), as cosign's SIGSTORE_ROOT_FILE")
	f.StringVar(&o.Identity.RekorKey, "rekor-key", "", "PEM public key (ECDSA) of the Rekor transparency log whose signed entry timestamp dates a keyless signature, as cosign's SIGSTORE_REKOR_PUBLIC_KEY; checked offline")
	f.StringVar(&o.Identity.CARoots, "ca-roots", "", "PEM root certificates of your own PKI the signing certificate must chain to (checked at the current time), instead of Fulcio")
	f.StringVar(&o.Identity.CAIntermediates, "ca-intermediates", "", "PEM intermediate certificates of the PKI of --ca-roots")
}

// addFlags binds the flags; what says what the policy is for.
func (o *trustOptions) addFlags(cmd *cobra.Command, what string) {
	f := cmd.Flags()
	f.StringVar(&o.Policy, "policy", "", "containers-policy.json (podman's format) "+what+"; sigstore signatures are found as the sha256-<digest>.sig attachments cosign pushes (default: no policy, signatures are not checked)")
	f.StringArrayVar(&o.Keys, "verify-key", nil, "PEM public key (cosign.pub) the plan's images must be signed with, repeatable (any key): a policy of sigstoreSigned with signedIdentity matchRepository for every repository of the plan, everything else rejected; "+what)
	o.addIdentityFlags(cmd, what)
}

// addBuildFlags binds the flags of build, which places the policy on the
// device.
func (o *trustOptions) addBuildFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.Policy, "policy", "", "containers-policy.json to place at "+trust.PolicyPath+" on the device, as it is (default: none is placed; the device keeps its own)")
	f.StringArrayVar(&o.Keys, "verify-key", nil, "PEM public key (cosign.pub) to place at "+trust.SigstoreKeyDir+"/<name>.pub, repeatable; without --policy, the device's policy.json requires a sigstore signature by one of them for every repository of the plan and rejects every other image")
	o.addIdentityFlags(cmd, "the device's policy.json, with the certificates and the Rekor key placed in "+trust.SigstoreKeyDir)
}

// applyDevice adds the device's policy, keys and registries.d entry to the
// plan; osImage (--bootc-image), the bootc image the device updates from,
// gets a rule like the plan's images. Without it, a generated policy
// rejects the bootc image's own updates: a warning says so.
func (o *trustOptions) applyDevice(p *plan.Plan, mirror string, bootc bool, osImage string) error {
	if !o.enabled() {
		return nil
	}
	if err := trust.Add(p, trust.Options{Policy: o.Policy, Keys: o.Keys, Identity: o.Identity, Mirror: mirror, OSImage: osImage}); err != nil {
		return err
	}
	if o.Policy == "" && bootc && osImage == "" {
		from := "--verify-key"
		if o.Identity.Enabled() {
			from = "--certificate-identity"
		}
		p.Warnings = append(p.Warnings, "the device's "+trust.PolicyPath+" from "+from+" rejects every image outside the plan's repositories, the bootc image that 'bootc upgrade' pulls included: name it with --bootc-image (its repository then needs a signature by the key) or give your own --policy")
	}
	return nil
}

// Validate checks the flag combination; the files are read by load.
func (o *trustOptions) Validate() error {
	if err := o.options().Validate(); err != nil {
		return usageError{err}
	}
	return nil
}

// validateBuild is Validate for build, where --verify-key keys go with
// --policy (placed for its keyPath entries).
func (o *trustOptions) validateBuild() error {
	if o.Identity.Enabled() && (o.Policy != "" || len(o.Keys) > 0) {
		return usageError{errors.New("--policy, --verify-key and the certificate identity flags (--certificate-identity, …) each say what the device trusts: give a policy (with its keys), keys, or an identity")}
	}
	if err := o.Identity.Validate(); err != nil {
		return usageError{err}
	}
	return nil
}

func (o *trustOptions) enabled() bool { return o.options().Enabled() }

func (o *trustOptions) options() sigverify.Options {
	return sigverify.Options{Policy: o.Policy, Keys: o.Keys, Identity: o.Identity}
}

// verify checks refs against the policy and fails, naming every refused
// image and the rule (one line each on stderr, the first in the error),
// when any is refused. what is the action that will not happen.
func (o *trustOptions) verify(ctx context.Context, stderr io.Writer, refs []string, reg registryclient.Options, what string) error {
	policyTrust, err := sigverify.Load(o.options(), refs)
	if err != nil {
		return err
	}
	results, err := sigverify.Verify(ctx, policyTrust, refs, reg)
	if err != nil {
		return err
	}
	bad := sigverify.Refused(results)
	if len(bad) == 0 {
		return nil
	}
	for _, r := range bad[1:] {
		fmt.Fprintf(stderr, "refused: %s: %s\n", r.Ref, r.Err)
	}
	more := ""
	if len(bad) > 1 {
		more = fmt.Sprintf(" (and %d more of %d %s refused, listed above)", len(bad)-1, len(refs), text.Plural(len(refs), "image", "images"))
	}
	return fmt.Errorf("verifying signatures with %s: %s: %w%s; %s", policyTrust.Source, bad[0].Ref, bad[0].Err, more, what)
}

// signatureTag matches the sigstore attachments mirror copies with the
// images (REPO:sha256-HEX.sig).
var signatureTag = lazyregexp.New(`:sha256-[0-9a-f]{64}\.sig$`)

// countSignatures splits refs into images and signature attachments.
func countSignatures(refs []string) (images, signatures int) {
	for _, r := range refs {
		if signatureTag.MatchString(r) {
			signatures++
		} else {
			images++
		}
	}
	return images, signatures
}

// signatureRefs are the signature attachments to copy with refs: looked up
// when a policy was checked (what is copied is what was verified).
func (o *trustOptions) signatureRefs(ctx context.Context, refs []string, reg registryclient.Options) ([]string, error) {
	if !o.enabled() {
		return nil, nil
	}
	return airgap.SignatureRefs(ctx, refs, reg)
}

// verifyBundles checks the sigstore bundles among atts (cosign
// --new-bundle-format signatures and attestations, attached as OCI 1.1
// referrers) with the --verify-key keys: each must be
// signed by one of them for the image it is attached to. With --policy,
// which containers/image evaluates and which has no rule for bundles, they
// are copied unverified, and a warning says so. what is the action that
// will not happen.
func (o *trustOptions) verifyBundles(stderr io.Writer, atts []airgap.Attachment, what string) error {
	n := 0
	for _, a := range atts {
		if a.Bundle != nil {
			n++
		}
	}
	if n == 0 || !o.enabled() {
		return nil
	}
	if len(o.Keys) == 0 {
		warn(stderr, fmt.Sprintf("%d sigstore %s attached to the images %s copied unverified: --policy is evaluated by containers/image, which reads only the sha256-<digest>.sig signatures; give --verify-key to verify bundles too", n, text.Plural(n, "bundle", "bundles"), text.Plural(n, "is", "are")))
		return nil
	}
	keys, err := sigverify.ReadKeys(o.Keys)
	if err != nil {
		return err
	}
	bv, err := sigverify.NewBundleVerifier(keys)
	if err != nil {
		return err
	}
	for _, a := range atts {
		if a.Bundle == nil {
			continue
		}
		_, digest, _ := strings.Cut(a.Image, "@")
		if _, err := bv.Verify(a.Bundle, digest); err != nil {
			return fmt.Errorf("verifying the sigstore bundle %s attached to %s with --verify-key: %w; %s", a.Ref, a.Image, err, what)
		}
	}
	return nil
}
