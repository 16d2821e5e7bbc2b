// Package trust renders what the device checks images with: the user's
// containers-policy.json or one generated from --verify-key public keys or
// a certificate identity, the keys and certificates it names, and the
// registries.d entry that turns on sigstore attachments for the plan's
// repositories, so that CRI-O, podman and bootc check on the device what
// mirror checked before embedding.
package trust
