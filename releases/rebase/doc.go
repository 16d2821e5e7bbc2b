// Package rebase is the rebase tooling for MicroShift release files: it
// refreshes image references in a release directory from an OpenShift
// release payload's image-references, an operator bundle's
// ClusterServiceVersion or the registry (tags resolved to digests), checks
// every reference against its registry, diffs two releases, and imports a
// release directory as the project's embedded release data.
//
// Updates change values only, never keys or formatting, and are written
// atomically (all files or none). Registry access goes through
// internal/registryclient. It holds no cobra and prints nothing: callers
// render the results it returns.
package rebase
