// Package lockdiff compares two compose.lock.json files: what a change to a
// profile, the catalog or the release does to a device image. It reads the
// lock as data (tolerating fields newer tools add, such as the optional
// footprint section) and renders the difference as Markdown for a pull
// request or as JSON. It does not resolve, build or talk to registries.
package lockdiff
