#!/usr/bin/env bash
# Prints what `make build` stamps into the binary, one per line:
#   version  the tag (v1.2.3, v1.2.3-4-gabcdef012345), or a Go-style
#            pseudo-version v0.0.0-<commit time>-<commit> before the first
#            tag; "-dirty" when the work tree has changes
#   commit   the full commit hash
#   date     the commit's time, UTC, RFC 3339 (not the build's: the same
#            commit builds the same bytes)
# Outside a git checkout it prints "(devel)" and two empty lines.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then
  printf '(devel)\n\n\n'
  exit 0
fi
dirty=""
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  dirty="-dirty"
fi
if version=$(git describe --tags --match 'v[0-9]*' 2>/dev/null); then
  version="$version$dirty"
else
  version="v0.0.0-$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S)-$(git rev-parse --short=12 HEAD)$dirty"
fi
echo "$version"
git rev-parse HEAD
TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ
