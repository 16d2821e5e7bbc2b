// Package releases reads MicroShift release files: the release-<arch>.json and
// release-<component>-<arch>.json documents that list, per architecture, the
// container image references a MicroShift release runs.
//
// It loads them from a directory laid out the way the microshift-release-info
// RPMs install them (/usr/share/microshift/release), or from the release
// bundles embedded in the binary, selects a release by semver constraint, and
// answers pin checks. It does not resolve components or talk to registries.
package releases
