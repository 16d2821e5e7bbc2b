#!/usr/bin/env bash
# Prints the performance figures the issues ask for. Run with `make bench`
# (which builds bin/microshift-compose first). Sections: build, render, verify.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=bin/microshift-compose
sections=("$@")
[ ${#sections[@]} -eq 0 ] && sections=(build render verify)

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

# The kustomize CLI, only for the comparison (microshift-compose links
# kustomize's API). v5.7.1 is the newest whose dependencies build here.
KUSTOMIZE_VERSION=${KUSTOMIZE_VERSION:-v5.7.1}
KUSTOMIZE=bin/kustomize

bench_render() {
  echo "== render: every manifest/plugin component of the default catalog (kube-proxy, storage-hostpath), in process vs the kustomize CLI"
  if ! "$KUSTOMIZE" version 2>/dev/null | grep -q "${KUSTOMIZE_VERSION#v}"; then
    GOFLAGS= GOBIN="$PWD/bin" go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
  fi
  ensure hyperfine hyperfine
  line=$(go test ./compose -run '^$' -bench 'RenderManifests$' -benchtime 50x -benchmem | grep -E '^BenchmarkRenderManifests')
  echo "$line"
  ns=$(awk '{for (i = 1; i < NF; i++) if ($(i+1) == "ns/op") print $i}' <<<"$line")
  out=$(mktemp -d)
  mapfile -t dirs < <(go run ./hack/render-dirs "$out/dirs" 2>/dev/null)
  for d in "${dirs[@]}"; do
    if ! "$KUSTOMIZE" build "$d" | cmp -s - "$(dirname "$d")/rendered.yaml"; then
      echo "render: kustomize build $d differs from microshift-compose's rendering" >&2; exit 1
    fi
  done
  echo "same bytes as kustomize $KUSTOMIZE_VERSION for ${#dirs[@]} directories"
  cmd="set -e;"
  for d in "${dirs[@]}"; do cmd+=" $KUSTOMIZE build $d >/dev/null;"; done
  hyperfine --warmup 3 --runs 30 -N --export-json "$out/h.json" "sh -c '$cmd'" >/dev/null
  python3 - "$out/h.json" "$ns" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
inproc = float(sys.argv[2]) / 1e9
print(f"in process (krusty): {inproc*1000:.1f} ms per rendering of all directories")
print(f"kustomize build CLI: median {r['median']*1000:.1f} ms (mean {r['mean']*1000:.1f}, min {r['min']*1000:.1f}) over {len(r['times'])} runs")
print(f"ratio: the CLI takes {r['median']/inproc:.1f}x as long as in-process rendering")
PY
  rm -rf "$out"
}

bench_verify() {
  echo "== release verify of 100 images against a local docker-registry (target: < 2 s)"
  ensure docker-registry docker-registry
  # The benchmark pushes 100 synthetic images (70 single-arch, 30 indexes,
  # over 10 repositories), then times rebase.Verify with a new client per
  # run: connection setup, registry pings, manifest and config fetches.
  go test ./releases/rebase -run '^$' -bench Verify100 -benchtime 20x -count 3 | grep -E '^Benchmark' |
    awk '{ printf "%s: %.0f ms per verify of 100 images\n", $1, $3 / 1e6 }'
}

for s in "${sections[@]}"; do "bench_$s"; done
