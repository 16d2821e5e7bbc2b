// Package airgap gets a plan's images where an airgapped device needs them
// and says what they cost: Mirror copies them, verified and resumable, from
// their registries (through registries.conf mirrors) or from an OCI layout,
// into an OCI layout (oci:), a layout with one skopeo dir: directory per
// image (dir:, what the bootc Containerfile embeds), an archive file
// (oci-archive:, to carry across an air gap) or a mirror registry
// (docker://, shared blobs uploaded once and mounted); Footprint reads their
// manifests and reports compressed and unique bytes per component.
//
// It reads image references from a plan or a layout, never the catalog or
// release files, talks to registries only through internal/registryclient
// (the containers auth, registries.conf and certs.d rules, TLS verified,
// timeouts and retries), and holds no cobra and no terminal code: progress
// goes to a Progress the caller supplies.
package airgap
