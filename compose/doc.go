// Package compose resolves: it turns a catalog, a release and a request
// (profile, --with, --without, arch, user config, hardening) into a Plan.
// The manifests of components (manifests/, plugins, Helm charts) are
// rendered here, since the plan's images are cross-checked against them;
// every other output is a function of the Plan, rendered by the packages
// under render/ and blueprints/, assembled by build and written by write.
// Nothing here reaches the network or writes a file (an operator
// catalog is opened, and a registry's read, before Resolve).
//
// Resolve runs named steps in the order of the table in resolve.go, each
// a function of the resolution's inputs (the catalog for the release, the
// release, the request and the release knowledge) and the plan so far,
// each in its own step_<name>.go with its own tests:
//
//   - request: the request checked against the catalog and the release;
//     what it asked for and the release in the plan
//   - target: the distro and bootc base the plan is built for
//   - version: how MicroShift's RPMs are pinned (exact or the stream)
//   - upgrade: the release the device upgrades from, checked
//   - select: the components and why, the capability providers
//   - check: the selection refused where the arch, the release, a
//     conflict or --lvmd cannot have it, or MicroShift is not installed
//   - hardening: FIPS, kernel arguments and CIS, with their notes
//   - capabilities: what the device does without a capability's provider
//   - images: the release files' images of the selection, by digest
//   - operators: the operators asked for (--operator), resolved in their
//     catalog (package operators, which reads the catalog image the
//     request opened), the filtered catalog image, and their images
//   - config: the merged MicroShift config and its sources
//   - devicefiles: lvmd.yaml and the components' files
//   - manifests: the kustomize-rendered manifests.d directories, their
//     images cross-checked against the plan
//   - files: those files and the manifests' in path order, with digests
//   - unused: warnings for embedded images nothing uses
//   - packages: RPMs, their versions and repositories
//   - packagefiles: the plan's files against the RPMs' own under /etc
//   - services: systemd units and the firewall
//   - inputs: what the composition ID is of
package compose
