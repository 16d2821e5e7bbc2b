// Package lockdiff compares two compose.lock.json files: what a change to a
// profile, the catalog or the release does to a device image, including the
// footprint sections when both locks have one. It takes plans read with
// lockfile.Load (it has no lock reader of its own) and renders the
// difference as Markdown for a pull request or as JSON. It does not read
// files, resolve, build or talk to registries.
package lockdiff
