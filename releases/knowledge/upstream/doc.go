// Package upstream generates microshift-compose's release data from a
// MicroShift git directory: the embedded release bundles
// (releases/data/<stream>.json) and the release knowledge
// (releases/knowledge/data/releases.toml and config.toml), one stream per
// pinned upstream commit (pins.toml), merged with the facts upstream does
// not state (handkept.toml). `make knowledge MICROSHIFT=<git dir>` drives it
// (hack/knowledge).
//
// It reads git objects with git's plumbing and never a work tree; it writes
// nothing itself (the caller writes Output.Files). The same pins, hand-kept
// facts and git objects give the same bytes.
package upstream
