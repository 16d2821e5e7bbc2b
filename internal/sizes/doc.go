// Package sizes bounds and adds up byte counts that come from outside the
// tool: the sizes a registry's descriptors state, a lock file's footprint
// section, what repository metadata and an RPM's header declare. Each size
// is checked against a sane bound and every sum is checked before it could
// overflow, so a total the tool prints is one its inputs really add up to,
// and a size that cannot be is refused with a line naming what stated it.
//
// It is the one place for that arithmetic: airgap checks every descriptor's
// size with it as it reads a manifest (mirror, footprint, diff), and
// footprint, diff and release diff (airgap's footprint, internal/transfer,
// lockdiff) add with it. It reads nothing and
// knows no formats; callers say what a size belongs to.
package sizes
