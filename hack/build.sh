#!/usr/bin/env bash
# Builds the binary for `make build` (and so `make run`). A build whose
# packages are in Go's build cache takes seconds; the first one on a machine
# compiles every dependency (about 1,100 packages: minutes on 2 cores), and
# go build says nothing while it does. So when the build is still running
# after ten seconds, this says what it is doing and, every 15 s, how far
# it is, on stderr.
#
#   hack/build.sh OUTPUT PACKAGE LDFLAGS
set -euo pipefail
out=$1 pkg=$2 ldflags=$3
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# -v prints each package as it is compiled (not those the cache holds).
"${GO:-go}" build -v -trimpath -ldflags "$ldflags" -o "$out" "$pkg" 2>"$log" &
pid=$!
start=$SECONDS
said=0
last=0
total=
while kill -0 "$pid" 2>/dev/null; do
  sleep 1
  elapsed=$((SECONDS - start))
  if [ "$said" = 0 ] && [ "$elapsed" -ge 10 ]; then
    total=$("${GO:-go}" list -deps "$pkg" 2>/dev/null | wc -l)
    done=$(grep -cv '^go: ' "$log" || true)
    echo "building $out: $done packages compiled so far, of up to $total (the first build on a machine compiles every dependency: several minutes on 2 cores; later builds take seconds)" >&2
    said=1
    last=$elapsed
  elif [ "$said" = 1 ] && [ $((elapsed - last)) -ge 15 ]; then
    done=$(grep -cv '^go: ' "$log" || true)
    echo "  ${elapsed}s: compiled $done of up to $total packages" >&2
    last=$elapsed
  fi
done
if ! wait "$pid"; then
  # go build's errors, without the names of the packages it compiled.
  grep -v '^[A-Za-z0-9._~/-]*$' "$log" >&2 || cat "$log" >&2
  exit 1
fi
grep '^go: ' "$log" >&2 || true
if [ "$said" = 1 ]; then
  echo "built $out in $((SECONDS - start))s" >&2
fi
