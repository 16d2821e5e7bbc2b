// Package provenance makes and checks the signed statement of a build's
// output (compose.intoto.jsonl): an in-toto Statement v1 whose subjects
// are every file build writes (by output-relative path) and every image
// the composition embeds (by its digest-pinned reference), and whose
// predicate is SLSA provenance v1: the composition ID and the normalised
// request it hashes (plan.Inputs, as compose computed them, not
// recomputed), the digests of the catalog, the release files and the
// tool's release knowledge, the release-info RPMs, and the tool's version
// and commit. Signing and verifying are package attest's.
//
// Verify checks an output directory against its statement offline and
// names the first file that differs. It writes nothing; it does not
// resolve, render or read the images/ layout that mirror fills (the
// statement names the images by digest; the layout is not build's).
package provenance
