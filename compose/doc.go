// Package compose turns a catalog, a release and a request (profile,
// --with, --without, arch, user config) into a Plan, renders the build
// outputs from it, and writes them atomically.
//
// Data flows one way: Resolve builds the Plan; Build renders outputs from the
// Plan alone; Write puts them on disk. Nothing here reaches the network:
// the top-level airgap package mirrors the plan's images and reads their
// sizes, and lockdiff compares two builds' locks.
package compose
