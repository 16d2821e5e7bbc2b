// Package components is the component catalog: what each pluggable part of
// MicroShift is (packages, images, config, files, services, firewall), which
// capabilities it provides and needs, and the named profiles that select them.
//
// It loads catalogs from TOML (the embedded default catalog, and a user's
// directory overlaid on it), rejects unknown keys and broken references at
// load time, and checks a catalog against release files. It does not resolve
// a selection into a plan; that is package compose.
package components
