// Package repo holds the repository's own checks, run by `make test`: no
// large file is committed, the release configuration (.goreleaser.yaml)
// builds the archives, RPM and DEB it promises. It has no code to import.
package repo
