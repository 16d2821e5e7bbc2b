#!/usr/bin/env bash
# Prints the performance figures the issues ask for. Run with `make bench`
# (which builds bin/microshift-compose first). Sections: build.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=bin/microshift-compose
sections=("$@")
[ ${#sections[@]} -eq 0 ] && sections=(build)

ensure() { # ensure <command> <debian package>
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null
  else
    echo "bench: $1 is missing (apt-get install $2)" >&2; exit 1
  fi
}

bench_build() {
  echo "== build --profile full (target: whole command, process start included, < 150 ms median)"
  go test ./compose -run '^$' -bench BuildFull -benchtime 30x -benchmem | grep -E '^Benchmark'
  ensure hyperfine hyperfine
  out=$(mktemp -d)
  hyperfine --warmup 3 --runs 30 -N --export-json "$out/h.json" \
    "$BIN build --profile full --arch x86_64 --output $out/o" >/dev/null
  python3 - "$out/h.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(f"binary: median {r['median']*1000:.1f} ms, mean {r['mean']*1000:.1f} ms, min {r['min']*1000:.1f} ms, max {r['max']*1000:.1f} ms over {len(r['times'])} runs")
PY
  rm -rf "$out"
}

for s in "${sections[@]}"; do "bench_$s"; done
