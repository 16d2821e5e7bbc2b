#!/usr/bin/env bash
# Installs the real programs the tests run against, from Debian packages.
# Tests fail (never skip) in CI when one is missing, so this must succeed.
set -euo pipefail

need=()
check() { command -v "$1" >/dev/null 2>&1 || need+=("$2"); }
check git git
# A real CNCF distribution registry on 127.0.0.1 (mirror, footprint, release
# verify), with TLS from a test CA and htpasswd auth.
check docker-registry docker-registry
check htpasswd apache2-utils
# Independent readers of what mirror and build write: skopeo (Debian 12's
# 1.9.3 is the oldest available, older than the containers/image that reads
# Docker-typed manifests from an OCI layout) and podman (pulls through the
# generated registries.conf.d drop-in, builds the bootc Containerfile, and
# builds the tool's own image: make image, and goreleaser's `docker build`
# through a podman docker command in the snapshot test; no engine needed).
check skopeo skopeo
check podman podman
# The man pages are rendered with groff (as man does) and checked against --help.
check groff groff-base
# GNU time measures mirror's peak RSS (a process Go starts inherits the test's).
check /usr/bin/time time
# The plugin containment tests start setsid daemons.
check setsid util-linux
# The release test reads the snapshot's RPMs back with rpm (DEBs with
# dpkg-deb, always on Debian); release fetch and import tests build
# release-info RPMs with rpmbuild (in Debian's rpm package) and make dnf
# repositories of them with createrepo_c.
check rpm rpm
check rpmbuild rpm
check createrepo_c createrepo-c
# The generated greenboot checks are read by bash -n and shellcheck.
check shellcheck shellcheck
# pykickstart's ksvalidator (../shared/tools) checks the generated kickstarts.
check python3 python3
# The bash completion test sources bash-completion, as a user's shell does
# (cobra's script calls its _get_comp_words_by_ref).
[ -f /usr/share/bash-completion/bash_completion ] || need+=(bash-completion)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-test-deps: missing ${need[*]}; run as root or install them" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}"
