#!/usr/bin/env bash
# Builds a pinned Go tool once per machine into a shared cache and prints
# its path; `make test-tools`, `make lint` and the tests (testutil.GoTool,
# testutil.ModuleTool, testutil.PinnedTool) all go through here.
#
#   hack/tool.sh go PKG VERSION [TAGS]
#                                 a program from the Go module proxy,
#                                 `go install PKG@VERSION` (with the
#                                 build tags its authors build it with,
#                                 comma-separated)
#   hack/tool.sh module DIR       a program from a module of this
#                                 repository with a go.mod of its own
#                                 (hack/tektoncheck), keyed by the hash
#                                 of its files
#   hack/tool.sh dir              prints the cache directory
#
# The cache is $MICROSHIFT_COMPOSE_TOOL_CACHE, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/microshift-compose/tools, with one
# directory per Go version and platform (go1.26.8-linux-amd64): a fresh
# clone on a machine that built a tool once does not build it again, and
# a new Go builds its own. Builds announce themselves on stderr and say
# every 30 s that they are still going; concurrent builds of one tool
# (two checkouts running make test) wait for each other, and a finished
# tool appears in the cache at once (renamed into place).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
platform=$(GOFLAGS= go env GOVERSION GOOS GOARCH | paste -sd-)
cache=${MICROSHIFT_COMPOSE_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/microshift-compose/tools}
dir=$cache/$platform

case "${1:-}" in
dir)
  echo "$dir"
  exit 0
  ;;
go)
  [ $# -eq 3 ] || [ $# -eq 4 ] || { echo "usage: $0 go PKG VERSION [TAGS]" >&2; exit 2; }
  pkg=$2 version=$3 tags=${4:-}
  name=$(basename "$pkg")
  # goreleaser's main package is the module root, .../goreleaser/v2.
  case "$name" in v[0-9]*) name=$(basename "$(dirname "$pkg")") ;; esac
  key=$name-$version
  what="$name $version"
  ;;
module)
  [ $# -eq 2 ] || { echo "usage: $0 module DIR" >&2; exit 2; }
  src=$root/$2
  name=$(basename "$src")
  hash=$(cd "$src" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
  key=$name-$hash
  what="$name (hack/$name, $hash)"
  ;;
*)
  echo "usage: $0 go PKG VERSION [TAGS] | module DIR | dir" >&2
  exit 2
  ;;
esac

bin=$dir/$key
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$dir"
# One build of a tool at a time across checkouts; the second waits and
# finds it built.
exec 9>"$dir/.$key.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9
fi
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

tmp=$(mktemp -d "$dir/.build-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building $what into $dir (once per machine)" >&2
start=$SECONDS
# The tool builds as its authors build it: without this module's build
# tags, workspace or cgo (its own tags, when given). `go install PKG@VERSION`
# reads the module's version list to look for a deprecation notice; where
# the Go module proxy refuses that list (it does for some modules, such as
# operator-registry: "@v/list: 403"), the same version is built in a
# throwaway module instead: `go get PKG@VERSION` selects the versions the
# tool's own go.mod requires, as go install does.
go_tool() {
  if GOBIN="$tmp" go install -tags "$tags" -ldflags=-s\ -w "$pkg@$version"; then
    return 0
  fi
  grep -q '/@v/list' "$tmp/log" || return 1
  echo "go install cannot list the module's versions; building in a throwaway module" >&2
  mkdir "$tmp/mod" && cd "$tmp/mod" && go mod init microshift-compose.tool >&2 &&
    go get "$pkg@$version" && go build -tags "$tags" -ldflags=-s\ -w -o "$tmp/$name" "$pkg"
}
case "$1" in
go) (cd "$tmp" && export GOFLAGS= GOWORK=off CGO_ENABLED=0 && go_tool) >"$tmp/log" 2>&1 &
  ;;
module) (cd "$src" && GOFLAGS= GOWORK=off CGO_ENABLED=0 go build -ldflags=-s\ -w -o "$tmp/$name" .) >"$tmp/log" 2>&1 &
  ;;
esac
build=$!
while :; do
  for _ in 1 2 3 4 5 6; do
    kill -0 "$build" 2>/dev/null || break 2
    sleep 5
  done
  echo "  still building $what ($((SECONDS - start)) s)" >&2
done
if ! wait "$build"; then
  echo "building $what failed:" >&2
  cat "$tmp/log" >&2
  exit 1
fi
mv "$tmp/$name" "$bin"
echo "built $what in $((SECONDS - start)) s" >&2
echo "$bin"
