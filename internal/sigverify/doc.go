// Package sigverify is the trust policy of microshift-compose: it loads a
// containers-policy.json (--policy) or builds one from sigstore public keys
// (--verify-key), checks image signatures against it with containers/image's
// own signature package, as podman, skopeo and CRI-O do, and writes the
// policy, keys and registries.d entry a device needs to check them again.
//
// Signatures are sigstore signatures found where cosign and containers/image
// put them: the sha256-<digest>.sig attachment beside the image in its
// repository (registries.d use-sigstore-attachments). Verification is
// offline: no transparency log, no Fulcio, nothing beyond the registry.
// It reads files only through internal/inputfile, holds no cobra and never
// implements cryptography itself.
package sigverify
