// Package rpmrepo takes MicroShift release files from where Red Hat ships
// them: the microshift-release-info RPMs (and the microshift-<component>-
// release-info RPMs beside them) of one exact version, read from a local
// .rpm file or found in dnf repositories (a baseurl, a .repo file, the
// host's /etc/yum.repos.d) through repomd.xml and the primary metadata, each
// package's checksum verified against the metadata that lists it.
//
// A repository's credentials (basic auth from its URL or username and
// password, its client certificate) go to its own origins only, the
// scheme, host and port of its baseurls: a location of its metadata
// (href, xml:base) or a redirect naming another origin is read without
// them, as from a mirror.
//
// Metadata is streamed: within the size and open-size repomd.xml lists
// (and hard caps), and no XML element or text between two beyond
// MaxPrimaryElement, what the decoder would hold whole.
//
// RPMs are read with go-rpmutils (lead, headers, header and payload
// digests) and cavaliergopher/cpio (the payload), never by running rpm2cpio;
// every size is bounded before anything is allocated for it, and a payload
// that decompresses to more than its header declares is refused.
//
// It turns packages into release files; storing them (the per-user cache)
// is releases' job, and it does not resolve plans.
package rpmrepo
