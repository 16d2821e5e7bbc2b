// Package airgap gets a plan's images where an airgapped device needs them
// and says what they cost: Mirror copies them, verified and resumable, into
// an OCI image layout or a mirror registry; Footprint reads their manifests
// and reports compressed and unique bytes per component.
//
// It reads image references from a plan, never the catalog or release
// files, talks to registries only through internal/registryclient (auth from
// the Docker and Podman auth files, TLS verified, retries with backoff), and
// holds no cobra and no terminal code: progress goes to a Progress the
// caller supplies.
package airgap
