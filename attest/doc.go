// Package attest signs and verifies in-toto statements in DSSE envelopes
// with cosign-compatible keys, offline.
//
// Keys are cosign's files: a private key in cosign's encrypted PEM
// ("ENCRYPTED SIGSTORE PRIVATE KEY", or the older "ENCRYPTED COSIGN
// PRIVATE KEY": scrypt and secretbox, as go-securesystemslib's encrypted
// package writes it), read with sigstore's cryptoutils, its password from
// COSIGN_PASSWORD as cosign reads it; a public key in PEM as
// `cosign generate-key-pair` writes cosign.pub. Envelopes are
// go-securesystemslib's DSSE, statements the in-toto attestation Go
// bindings', so that `cosign verify-blob-attestation --key` reads what Sign
// writes. Statements are encoded canonically (keys sorted, no insignificant
// space): the same statement gives the same payload bytes.
//
// It knows nothing of compositions, bundles or files on disk beyond the key
// files it is given: callers build the statement and decide what its
// subjects mean. It implements no cryptography itself and talks to no
// transparency log, Fulcio or registry.
package attest
