#!/usr/bin/env bash
# Installs the real programs the tests run against, from Debian packages.
# Tests fail (never skip) in CI when one is missing, so this must succeed.
set -euo pipefail

need=()
check() { command -v "$1" >/dev/null 2>&1 || need+=("$2"); }
# (Later issues add skopeo and docker-registry here.)
check git git

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
