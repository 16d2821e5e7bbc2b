// Package transfer says what an update moves across an air gap: the blobs
// and manifests the new images reach that the old ones do not (what a site
// holding the old images still needs), per component, as `diff` and
// `release diff` report it. It computes from image contents read elsewhere
// (airgap reads manifests from registries or layouts); it reads no files
// and talks to no registry.
package transfer
