#!/usr/bin/env bash
# Prints the performance figures the issues ask for. Run with `make bench`
# (which builds bin/microshift-compose first). Sections: build, render,
# scale, verify, mirror (`./hack/bench.sh mirror` runs one).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=bin/microshift-compose
sections=("$@")
[ ${#sections[@]} -eq 0 ] && sections=(build render scale verify mirror)

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
  echo "== render: every manifest component of the default catalog (storage-hostpath), in process vs the kustomize CLI"
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

# scale: rendering that grows linearly with the number of resources (it was
# quadratic inside kustomize: 1k/2k/4k resources took 2.2/7.1/23 s, 30k small
# ConfigMaps over 300 s), in process, and through the whole binary with a
# plugin that prints 10k resources.
bench_scale() {
  echo "== render at scale (target: 10k resources in seconds; linear growth)"
  go test ./compose/manifests -run '^$' -bench 'RenderScale' -benchtime 1x -benchmem | grep -E '^Benchmark' |
    awk '{ printf "%s: %.2f s, %.0f MB allocated\n", $1, $3 / 1e9, $5 / 1e6 }'
  [ -x /usr/bin/time ] || ensure time time
  local work
  work=$(mktemp -d)
  mkdir -p "$work/catalog/components/scale"
  cat >"$work/catalog/components/scale/component.toml" <<'TOML'
name = "scale"
description = "a plugin printing 10k resources"
order = 950
requires = ["core"]
TOML
  cat >"$work/catalog/components/scale/plugin" <<'SH'
#!/bin/sh
[ "$1" = api-version ] && { echo v1; exit 0; }
i=0
while [ $i -lt 10000 ]; do
  printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\n  namespace: edge\ndata:\n  k: v%d\n' $i $i
  i=$((i + 1))
done
SH
  chmod +x "$work/catalog/components/scale/plugin"
  /usr/bin/time -o "$work/time" -f '%e %M' "$BIN" build --profile minimal --with scale --arch x86_64 \
    --catalog "$work/catalog" --output "$work/out" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
  read -r secs kb <"$work/time"
  echo "build with a plugin printing 10k ConfigMaps: ${secs} s wall, peak RSS $((kb / 1024)) MiB"
  rm -rf "$work"
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

# mirror: a synthetic set (24 images, ~1 GiB unique, >30% in shared base
# layers) in a local docker-registry, mirrored to an OCI layout by us and by
# `skopeo copy` one image at a time into one layout (what users do today).
# Both start from a warm page cache; the set and both layouts are removed
# at the end.
mirror_work= mirror_registry=
# mirror_cleanup stops the registry and removes the set and both layouts
# (~3 GiB), at the end of the section or when the script stops early.
mirror_cleanup() {
  if [ -n "$mirror_registry" ]; then kill "$mirror_registry" 2>/dev/null || true; wait "$mirror_registry" 2>/dev/null || true; fi
  if [ -n "$mirror_work" ]; then rm -rf "$mirror_work"; fi
  mirror_registry= mirror_work=
}

bench_mirror() {
  echo "== mirror to an OCI layout (targets: >= 2x faster than skopeo one by one, on-disk = unique bytes, peak RSS < 100 MB)"
  ensure docker-registry docker-registry
  ensure skopeo skopeo
  ensure curl curl
  [ -x /usr/bin/time ] || ensure time time
  local work port
  work=$(mktemp -d "${TMPDIR:-/tmp}/mc-bench-mirror.XXXXXX")
  mirror_work=$work
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  printf 'version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' \
    "$work/storage" "$port" >"$work/registry.yml"
  docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
  mirror_registry=$!
  trap mirror_cleanup EXIT
  for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$port/v2/" >/dev/null 2>&1 && break; sleep 0.1; done

  local set unique ref
  set=$(go run ./hack/benchmirror -registry "127.0.0.1:$port" -lock "$work/bench.lock.json")
  echo "set: $set"
  unique=$(sed -E 's/.*unique_bytes=([0-9]+).*/\1/' <<<"$set")
  local -a refs
  mapfile -t refs < <(python3 -c 'import json,sys; [print(i["ref"]) for i in json.load(open(sys.argv[1]))["images"]]' "$work/bench.lock.json")

  warm() { find "$work/storage" -type f -exec cat {} + >/dev/null; sync; }

  warm
  /usr/bin/time -o "$work/ours.time" -f '%e %M' \
    "$BIN" mirror --lock "$work/bench.lock.json" --quiet --to "oci:$work/ours" >"$work/ours.out"
  local ours_s ours_kb
  read -r ours_s ours_kb <"$work/ours.time"

  warm
  local start end
  start=$(date +%s.%N)
  for ref in "${refs[@]}"; do
    skopeo --insecure-policy copy --quiet --src-tls-verify=false "docker://$ref" "oci:$work/skopeo:$ref"
  done
  end=$(date +%s.%N)

  local ours_blobs skopeo_blobs ours_du skopeo_du
  # File bytes (du -b would add the directories' own sizes).
  ours_blobs=$(find "$work/ours/blobs" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
  skopeo_blobs=$(find "$work/skopeo/blobs" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
  ours_du=$(du -sb "$work/ours" | cut -f1)
  skopeo_du=$(du -sb "$work/skopeo" | cut -f1)
  python3 - "$ours_s" "$start" "$end" "$ours_kb" "$unique" "$ours_blobs" "$skopeo_blobs" "$ours_du" "$skopeo_du" "${#refs[@]}" "$(cat "$work/ours.out")" "$work/ours/index.json" <<'PY'
import json, sys
ours, start, end, kb, unique, ob, sb, od, sd, n, summary, index = sys.argv[1:]
manifests = sum(d["size"] for d in json.load(open(index))["manifests"])
ours, sk = float(ours), float(end) - float(start)
mib = lambda b: f"{int(b) / 2**20:.1f} MiB"
print(f"summary: {summary}")
print(f"microshift-compose mirror: {ours:.2f} s wall, peak RSS {int(kb) / 1024:.1f} MiB")
print(f"skopeo copy, {n} images one by one into one layout: {sk:.2f} s wall")
print(f"ratio: {sk / ours:.2f}x (skopeo time / ours)")
print(f"unique config+layer bytes of the set: {mib(unique)} ({unique} bytes)")
print(f"blob files (configs, layers, manifests): ours {mib(ob)} ({ob} bytes), skopeo {mib(sb)} ({sb} bytes)")
print(f"ours minus its {n} manifests ({manifests} bytes) = {int(ob) - manifests} bytes: {'equal to' if int(ob) - manifests == int(unique) else 'DIFFERENT from'} the unique bytes")
print(f"on disk (du), whole layout: ours {mib(od)}, skopeo {mib(sd)}")
PY
  mirror_cleanup
}

for s in "${sections[@]}"; do "bench_$s"; done
