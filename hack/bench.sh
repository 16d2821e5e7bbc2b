#!/usr/bin/env bash
# Prints the performance figures the issues ask for. Run with `make bench`
# (which builds bin/microshift-compose first). Sections: build, resolve,
# render, scale, validate, matrix, verify, mirror, registry, rss, day2, attest, operators (`./hack/bench.sh registry` runs one;
# rss_trust runs the trust cases alone; day2_bundles and day2_split are day2's halves); deps, not run by
# default (it compiles everything again, minutes of CPU), says what each module costs to compile and to start.
set -euo pipefail
cd "$(dirname "$0")/.."
# The Makefile exports these; set them when the script runs on its own.
if [ -z "${GOFLAGS:-}" ]; then
  GOFLAGS="-buildvcs=false -tags=$(make -s --no-print-directory tags)"
  export GOFLAGS
fi
export CGO_ENABLED="${CGO_ENABLED:-0}"
BIN=${BIN:-bin/microshift-compose} # BIN=... compares another build
sections=("$@")
[ ${#sections[@]} -eq 0 ] && sections=(build resolve render scale validate matrix verify mirror registry rss day2 attest operators)

ensure() { # ensure <command> <debian package>
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null
  else
    echo "bench: $1 is missing (apt-get install $2)" >&2; exit 1
  fi
}

# bench_deps: what each module the binary links costs, to compile (a
# build with an empty cache: go build -a -debug-actiongraph, CPU per
# package summed by module) and at every start (GODEBUG=inittrace=1 over 15
# runs of `version`), side by side (hack/depcost).
bench_deps() {
  echo "== what each dependency costs: compile CPU with an empty build cache, and package initialisation per start"
  local d
  d=$(mktemp -d)
  GOCACHE="$d/gocache" go build -a -trimpath -debug-actiongraph="$d/actiongraph.json" -o "$d/microshift-compose" ./cmd/microshift-compose
  go list -deps -f '{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}' ./cmd/microshift-compose >"$d/deps.txt"
  for _ in $(seq 15); do
    GODEBUG=inittrace=1 "$d/microshift-compose" version 2>>"$d/inittrace" >/dev/null
  done
  echo "binary: $(python3 -c 'import os, sys; print(f"{os.path.getsize(sys.argv[1]) / 1e6:.1f} MB")' "$d/microshift-compose")"
  go run ./hack/depcost -graph "$d/actiongraph.json" -deps "$d/deps.txt" -inittrace "$d/inittrace" -runs 15
  rm -rf "$d"
}

bench_build() {
  echo "== build --profile full vs the documented manual path (hack/jq-path.sh: jq over the release file plus a blueprint header), whole processes (goal: ratio <= 1.0)"
  go test ./assemble -run '^$' -bench 'BuildFull$' -benchtime 30x -benchmem | grep -E '^Benchmark' |
    awk '{ printf "in process, caches warm: %.1f ms, %s B, %s allocs per build\n", $3 / 1e6, $5, $7 }'
  # What a build does once per process, each beside what it replaced.
  { go test ./blueprints -run '^$' -bench 'DistroLookup' -benchtime 20x -benchmem
    go test ./releases -run '^$' -bench 'SelectEmbedded|EmbeddedAll' -benchtime 20x -benchmem
    go test ./releases/knowledge -run '^$' -bench 'Parse' -benchtime 20x -benchmem; } | grep -E '^Benchmark' |
    awk '{ name = $1; sub(/-[0-9]+$/, "", name); printf "once per process: %-32s %6.1f ms, %s B\n", name, $3 / 1e6, $5 }'
  ensure hyperfine hyperfine
  ensure jq jq
  local out stream
  out=$(mktemp -d)
  stream=$("$BIN" release list --output json | jq -r '.[0].stream')
  jq '.files["release-x86_64.json"]' "releases/data/$stream.json" >"$out/release-x86_64.json"
  # The first build writes the reduced osbuild definitions to the cache
  # (docs/reference.md, "Cache"); the figures are for the builds after it.
  export MICROSHIFT_COMPOSE_CACHE="$out/cache"
  "$BIN" build --profile full --arch x86_64 --output "$out/o" >/dev/null
  # Shell completion of a flag (goal: under 50 ms) is timed beside
  # `version`, which is process start and package initialisation alone.
  hyperfine --warmup 5 --runs 40 -N --export-json "$out/h.json" \
    "$BIN build --profile full --arch x86_64 --output $out/o" \
    "hack/jq-path.sh $out/release-x86_64.json $stream $out/manual.toml" \
    "$BIN version" \
    "$BIN __complete build --profile ''" \
    "$BIN __complete build --distro ''" >/dev/null
  unset MICROSHIFT_COMPOSE_CACHE
  python3 - "$out/h.json" <<'PY'
import json, sys
ours, jq, version, profile, distro = json.load(open(sys.argv[1]))["results"]
cpu = lambda r: (r["user"] + r["system"]) * 1000
line = lambda r: f"median {r['median']*1000:.1f} ms wall (min {r['min']*1000:.1f}), {cpu(r):.1f} ms CPU, over {len(r['times'])} runs"
for name, r in (("microshift-compose build", ours), ("jq path", jq)):
    print(f"{name}: {line(r)}")
print(f"ratio: build / jq path = {ours['median']/jq['median']:.2f} wall (minimums {ours['min']/jq['min']:.2f}), {cpu(ours)/cpu(jq):.2f} CPU")
print(f"of the build, process start and package initialisation (`version`): {cpu(version):.1f} ms CPU, {version['median']*1000:.1f} ms wall")
print("shell completion of a flag, whole processes (goal: < 50 ms):")
for name, r in (("__complete build --profile ''", profile), ("__complete build --distro ''", distro), ("version, beside them", version)):
    print(f"  {name:30} {line(r)}")
PY
  startup_breakdown "$out"
  rm -rf "$out"
}

# startup_breakdown DIR: what process start costs, beside the figures
# above: the binary's size, page faults (GNU time %R, median of 15 runs)
# of `version` and of the build, the build's garbage collections, and
# package initialisation by module
# (GODEBUG=inittrace=1, averaged over 15 runs of `version`; every command
# of the one binary pays it), with what only Helm's packages (its chart
# loader, linked for compose/chart) add. DIR holds the build's cache and output.
startup_breakdown() {
  local dir=$1 i
  [ -x /usr/bin/time ] || ensure time time
  echo "binary: $BIN, $(python3 -c 'import os, sys; print(f"{os.path.getsize(sys.argv[1]) / 1e6:.1f} MB")' "$BIN")"
  for i in $(seq 15); do
    /usr/bin/time -a -o "$dir/version.faults" -f '%R' "$BIN" version >/dev/null
    MICROSHIFT_COMPOSE_CACHE="$dir/cache" /usr/bin/time -a -o "$dir/build.faults" -f '%R' \
      "$BIN" build --profile full --arch x86_64 --output "$dir/o" >/dev/null 2>&1
    GODEBUG=inittrace=1 "$BIN" version 2>>"$dir/inittrace" >/dev/null
  done
  MICROSHIFT_COMPOSE_CACHE="$dir/cache" GODEBUG=gctrace=1 "$BIN" build --profile full --arch x86_64 --output "$dir/o" 2>"$dir/gctrace" >/dev/null
  go version -m "$BIN" >"$dir/modules"
  go list -deps -json ./cmd/microshift-compose >"$dir/deps.json"
  python3 - "$dir" 15 <<'PY'
import collections, json, re, statistics, sys
d, runs = sys.argv[1], int(sys.argv[2])
faults = lambda f: statistics.median(int(l) for l in open(f"{d}/{f}") if l.strip().isdigit())
print(f"page faults (minor): version {faults('version.faults'):.0f}, build --profile full {faults('build.faults'):.0f}")
gcs = sum(1 for l in open(f"{d}/gctrace") if l.startswith("gc "))
print(f"garbage collections in a build --profile full (GODEBUG=gctrace=1): {gcs} (internal/startgc: none until the heap reaches 16 MB)")
mods = sorted((l.split()[1] for l in open(f"{d}/modules") if l.split()[:1] in (["mod"], ["dep"])), key=len, reverse=True)
def module(pkg):
    if "." not in pkg.split("/")[0]:
        return "std"
    return next((m for m in mods if pkg == m or pkg.startswith(m + "/")), pkg)
clock, alloc, pkgs = collections.Counter(), collections.Counter(), collections.Counter()
for line in open(f"{d}/inittrace"):
    m = re.match(r"init (\S+) @\S+ ms, ([\d.]+) ms clock, (\d+) bytes", line)
    if m:
        clock[m[1]] += float(m[2]) / runs
        alloc[m[1]] += int(m[3]) / runs
by_mod_clock, by_mod_alloc = collections.Counter(), collections.Counter()
for p in clock:
    by_mod_clock[module(p)] += clock[p]
    by_mod_alloc[module(p)] += alloc[p]
    pkgs[module(p)] += 1
print(f"package initialisation (`version`, mean of {runs}): {sum(clock.values()):.1f} ms, {sum(alloc.values()) / 1e6:.2f} MB allocated, {len(clock)} packages; top modules:")
for m, t in by_mod_clock.most_common(12):
    print(f"  {t:5.1f} ms {by_mod_alloc[m] / 1e6:5.2f} MB {pkgs[m]:4d} pkgs  {m}")
# The packages linked only because compose/chart imports Helm: what
# remains reachable from main when our packages' imports of helm.sh/...
# are cut.
graph, dec, text, i = {}, json.JSONDecoder(), open(f"{d}/deps.json").read(), 0
while i < len(text):
    while i < len(text) and text[i].isspace():
        i += 1
    if i < len(text):
        o, i = dec.raw_decode(text, i)
        graph[o["ImportPath"]] = o.get("Imports", [])
main = "github.com/microshift-compose/microshift-compose/cmd/microshift-compose"
ours = lambda p: p.startswith("github.com/microshift-compose/microshift-compose/")
def reach(cut):
    seen, todo = {main}, [main]
    while todo:
        p = todo.pop()
        for c in graph.get(p, []):
            if not (cut and ours(p) and c.startswith("helm.sh/")) and c not in seen:
                seen.add(c)
                todo.append(c)
    return seen
helm = reach(False) - reach(True)
print(f"of which linked only for Helm (compose/chart): {len(helm)} packages, "
      f"{sum(clock[p] for p in helm):.1f} ms, {sum(alloc[p] for p in helm) / 1e6:.2f} MB allocated")
PY
}

bench_resolve() {
  echo "== resolver: synthetic catalogs of 100, 1,000 and 10,000 components (target: 10,000 in < 200 ms, linear)"
  go test ./compose -run '^$' -bench 'ResolveScale' -benchtime 5x -count 3 -benchmem | grep -E '^BenchmarkResolveScale' | python3 -c '
import collections, math, re, sys
runs = collections.defaultdict(list)
for line in sys.stdin:
    m = re.match(r"BenchmarkResolveScale/(\w+)/(\d+)\S*\s+\d+\s+([\d.]+) ns/op", line)
    if m:
        runs[(m[1], int(m[2]))].append(float(m[3]))
for shape in ("chain", "wide"):
    pts = sorted((n, min(v)) for (s, n), v in runs.items() if s == shape)
    xs = [math.log(n) for n, _ in pts]
    ys = [math.log(t) for _, t in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    print(f"{shape}: " + ", ".join(f"{n} in {t/1e6:.1f} ms" for n, t in pts) + f"; fitted exponent {k:.2f}")
'
  go test ./compose -run '^$' -bench 'CatalogProblems' -benchtime 5x | grep -E '^Benchmark' |
    awk '{ printf "catalog validation %s: %.1f ms\n", $1, $3 / 1e6 }'
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

bench_validate() {
  echo "== validate: a catalog of 300 and of 3,000 profiles, every embedded release and arch, whole processes (goal: linear in profiles)"
  local d n
  d=$(mktemp -d)
  for n in 300 3000; do
    mkdir -p "$d/$n"
    cp -r components/data/components "$d/$n/"
    { cat components/data/catalog.toml
      for i in $(seq 1 "$n"); do printf '[profiles.p%d]\ndescription = "x"\ncomponents = ["core", "networking-ovnk"]\n\n' "$i"; done
    } >"$d/$n/catalog.toml"
    /usr/bin/time -f "%e %M" -o "$d/time" "$BIN" validate --catalog "$d/$n" >"$d/out" 2>&1 || true
    read -r secs kb < <(tail -1 "$d/time")
    awk -v n="$n" -v s="$secs" -v kb="$kb" -v last="$(tail -1 "$d/out")" \
      'BEGIN { printf "%5d profiles: %6.1f s, %.1f ms per profile, peak %.0f MB: %s\n", n, s, s * 1000 / n, kb / 1024, last }'
  done
  rm -rf "$d"
}

# matrix: 4 profiles x 2 arches x every embedded release composed by one
# `matrix` process, beside the same cells as one `build` process each, one
# after the other (what a CI job looping over the cells does). Cells that a
# release cannot honour (minimal before 4.18) fail the same way in both.
bench_matrix() {
  echo "== matrix: 4 profiles x 2 arches x every embedded release, one process vs one build process per cell (GNU time: wall, peak RSS)"
  [ -x /usr/bin/time ] || ensure time time
  ensure jq jq
  local work cells ok failed
  work=$(mktemp -d)
  export MICROSHIFT_COMPOSE_CACHE="$work/cache"
  local -a spec=(--profile minimal,networking-only,storage-only,full --arch x86_64,aarch64 --release all)
  # The first run fills the osbuild definitions cache (docs/reference.md, "Cache"), as
  # for the build section.
  "$BIN" matrix "${spec[@]}" --output "$work/warm" >/dev/null 2>&1 || true
  for jobs in 1 2; do
    /usr/bin/time -o "$work/matrix.time" -f '%e %M' "$BIN" matrix "${spec[@]}" --jobs "$jobs" --output "$work/m$jobs" >"$work/summary.json" 2>/dev/null || true
    read -r secs kb < <(tail -n 1 "$work/matrix.time") # GNU time adds a line for a non-zero exit
    cells=$(jq '.cells | length' "$work/summary.json")
    ok=$(jq '.ok' "$work/summary.json")
    failed=$(jq '.failed' "$work/summary.json")
    echo "matrix --jobs $jobs: $cells cells ($ok ok, $failed refused by their release) in ${secs} s wall, peak RSS $((kb / 1024)) MiB"
  done
  local start end peak=0
  start=$(date +%s.%N)
  while read -r cell profile arch release; do
    /usr/bin/time -o "$work/build.time" -f '%e %M' "$BIN" build --profile "$profile" --arch "$arch" --release "$release" \
      --output "$work/b/$cell" >/dev/null 2>&1 || true
    read -r _ kb < <(tail -n 1 "$work/build.time")
    [ "$kb" -gt "$peak" ] && peak=$kb
  done < <(jq -r '.cells[] | "\(.cell) \(.profile) \(.arch) \(.release)"' "$work/summary.json")
  end=$(date +%s.%N)
  python3 -c "import sys; print(f'{sys.argv[1]} build processes, one after the other: {float(sys.argv[3]) - float(sys.argv[2]):.2f} s wall, peak RSS {int(sys.argv[4]) // 1024} MiB (the largest one)')" "$cells" "$start" "$end" "$peak"
  # The cells are the same bytes either way.
  if ! diff -r "$work/m1" "$work/b" >/dev/null; then echo "bench: matrix cells differ from build's" >&2; exit 1; fi
  echo "every cell byte-identical to its build"
  unset MICROSHIFT_COMPOSE_CACHE
  rm -rf "$work"
}

bench_verify() {
  echo "== release verify of 100 images (70 single-arch, 30 indexes, 10 repositories) against a local docker-registry, vs the manifest-fetch floor (target: <= 1.5x)"
  ensure docker-registry docker-registry
  ensure curl curl
  ensure hyperfine hyperfine
  # In process: rebase.Verify with a new client per run (connection setup,
  # registry pings, manifest and config fetches).
  go test ./releases/rebase -run '^$' -bench Verify100 -benchtime 20x -count 3 | grep -E '^Benchmark' |
    awk '{ printf "in process: %.0f ms per verify of 100 images\n", $3 / 1e6 }'
  # Whole processes: `release verify` and one curl fetching exactly the
  # documents verify reads (each manifest by digest, each single image's
  # config), over as many connections as verify's --jobs: the floor.
  reg_work=$(mktemp -d "${TMPDIR:-/tmp}/mc-bench-verify.XXXXXX")
  trap reg_cleanup EXIT
  local port set
  port=$(free_port)
  start_registry "$reg_work/registry" "$port"
  set=$(go run ./hack/benchverify -registry "127.0.0.1:$port" -out "$reg_work")
  echo "set: $set"
  "$BIN" release verify "$reg_work/release" --insecure-registry "127.0.0.1:$port" --jobs 8 >/dev/null
  curl -fsS --no-progress-meter --parallel --parallel-max 8 -K "$reg_work/curl.cfg"
  hyperfine --warmup 3 --runs 20 -N --export-json "$reg_work/h.json" \
    "$BIN release verify $reg_work/release --insecure-registry 127.0.0.1:$port --jobs 8" \
    "curl -fsS --no-progress-meter --parallel --parallel-max 8 -K $reg_work/curl.cfg" \
    "$BIN version" >/dev/null
  python3 - "$reg_work/h.json" <<'PY'
import json, sys
ours, floor, version = json.load(open(sys.argv[1]))["results"]
for name, r in (("microshift-compose release verify", ours), ("curl floor (same fetches, 8 parallel)", floor), ("microshift-compose version (process start)", version)):
    print(f"{name}: median {r['median']*1000:.1f} ms (min {r['min']*1000:.1f}) over {len(r['times'])} runs")
print(f"ratio: verify / floor = {ours['median']/floor['median']:.2f}")
PY
  reg_cleanup
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

# registry: the same set mirrored registry -> registry, by us and by
# `skopeo sync`, each into its own empty docker-registry behind a proxy that
# counts what is uploaded (hack/countingproxy): blob bytes sent, uploads
# completed, cross-repository mounts. One repository per image, so the
# three shared base layers are what mounts save.
reg_pids=() reg_work=
reg_cleanup() {
  local pid
  for pid in "${reg_pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  reg_pids=()
  if [ -n "$reg_work" ]; then rm -rf "$reg_work"; fi
  reg_work=
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# start_registry DIR PORT: docker-registry on 127.0.0.1:PORT with storage in DIR.
start_registry() {
  mkdir -p "$1"
  printf 'version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' "$1/storage" "$2" >"$1/registry.yml"
  docker-registry serve "$1/registry.yml" >"$1/registry.log" 2>&1 &
  reg_pids+=($!)
  for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$2/v2/" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "bench: docker-registry on port $2 did not start" >&2; exit 1
}

bench_registry() {
  echo "== mirror registry -> registry: bytes uploaded, microshift-compose vs skopeo sync (the bench set)"
  ensure docker-registry docker-registry
  ensure skopeo skopeo
  ensure curl curl
  [ -x /usr/bin/time ] || ensure time time
  reg_work=$(mktemp -d "${TMPDIR:-/tmp}/mc-bench-registry.XXXXXX")
  trap reg_cleanup EXIT
  local src ours theirs pours ptheirs
  src=$(free_port) ours=$(free_port) theirs=$(free_port)
  start_registry "$reg_work/src" "$src"
  start_registry "$reg_work/ours" "$ours"
  start_registry "$reg_work/theirs" "$theirs"
  go build -o "$reg_work/countingproxy" ./hack/countingproxy
  pours=$(free_port) ptheirs=$(free_port)
  "$reg_work/countingproxy" -listen "127.0.0.1:$pours" -to "http://127.0.0.1:$ours" 2>/dev/null &
  reg_pids+=($!)
  "$reg_work/countingproxy" -listen "127.0.0.1:$ptheirs" -to "http://127.0.0.1:$theirs" 2>/dev/null &
  reg_pids+=($!)
  for p in "$pours" "$ptheirs"; do
    for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$p/_counts" >/dev/null 2>&1 && break; sleep 0.1; done
  done

  local set
  set=$(go run ./hack/benchmirror -registry "127.0.0.1:$src" -lock "$reg_work/bench.lock.json")
  echo "set: $set"
  # skopeo sync reads the same images, by digest, from a YAML source.
  python3 - "$reg_work/bench.lock.json" "127.0.0.1:$src" >"$reg_work/sync.yaml" <<'PY'
import json, sys
lock, host = sys.argv[1], sys.argv[2]
repos = {}
for im in json.load(open(lock))["images"]:
    name, digest = im["ref"].split("@")
    repos.setdefault(name[len(host) + 1:], []).append(digest)
print(f"{host}:\n  tls-verify: false\n  images:")
for repo, digests in sorted(repos.items()):
    print(f"    {repo}:")
    for d in digests:
        print(f'      - "{d}"')
PY
  /usr/bin/time -o "$reg_work/ours.time" -f '%e %M' \
    "$BIN" mirror --lock "$reg_work/bench.lock.json" --quiet --to "docker://127.0.0.1:$pours/mirror" >"$reg_work/ours.out"
  /usr/bin/time -o "$reg_work/theirs.time" -f '%e %M' \
    skopeo sync --src yaml --dest docker --dest-tls-verify=false "$reg_work/sync.yaml" "127.0.0.1:$ptheirs/mirror" >/dev/null 2>"$reg_work/theirs.err"
  python3 - "$(curl -fsS "http://127.0.0.1:$pours/_counts")" "$(curl -fsS "http://127.0.0.1:$ptheirs/_counts")" \
    "$(cat "$reg_work/ours.time")" "$(cat "$reg_work/theirs.time")" "$set" "$(cat "$reg_work/ours.out")" <<'PY'
import json, sys
ours, theirs = json.loads(sys.argv[1]), json.loads(sys.argv[2])
(os_, okb), (ts, tkb) = sys.argv[3].split(), sys.argv[4].split()
unique = int(sys.argv[5].split("unique_bytes=")[1].split()[0])
mib = lambda b: f"{b / 2**20:.1f} MiB"
print(f"summary: {sys.argv[6]}")
print(f"{'':28}{'blob uploads':>14}{'mounts':>8}{'bytes uploaded':>22}{'wall':>9}{'peak RSS':>11}")
for name, c, s, kb in (("microshift-compose mirror", ours, os_, okb), ("skopeo sync", theirs, ts, tkb)):
    print(f"{name:28}{c['uploads']:>14}{c['mounts']:>8}{mib(c['uploaded_bytes']):>12} ({c['uploaded_bytes']:>10}){float(s):>8.1f}s{int(kb) / 1024:>8.1f} MiB")
print(f"unique config+layer bytes of the set: {mib(unique)} ({unique}); ours uploaded {ours['uploaded_bytes'] / unique:.3f}x that, skopeo {theirs['uploaded_bytes'] / unique:.3f}x")
PY
  reg_cleanup
}

# rss: peak RSS of mirror against a registry serving two 64 MiB manifests
# (with and without Content-Length) and a stalled blob, measured with GNU
# time in the end-to-end test that also checks the errors.
bench_rss() {
  echo "== mirror peak RSS against a hostile registry (target: < 100 MB)"
  go test ./cmd/microshift-compose -count=1 -run '^TestMirrorHostileRegistry$' -v | grep -E 'peak RSS|^(ok|FAIL|---)'
  bench_rss_inputs
  bench_rss_trust
}

# Peak RSS of the files a trust policy names (keyPath /dev/zero, a named
# pipe, 2 GiB; a CA bundle in several scopes), against a registry serving
# a signed image, where containers/image reads them (target: refused
# < 100 MB, accepted < 150 MB). With BIN=<old binary> the same cases run
# that build and nothing is checked (each killed after 60 s, its address
# space bounded to 4 GB).
bench_rss_trust() {
  echo "== peak RSS of the files a policy names (GNU time %M; refused < 100 MB, accepted < 150 MB)"
  local bin=""
  [ "$BIN" != bin/microshift-compose ] && bin=$(realpath "$BIN")
  TRUST_RSS_BIN="$bin" go test ./cmd/microshift-compose -count=1 -run '^TestTrustFilesRSS$' -v | grep -E 'peak RSS|^(ok|FAIL|---)' | sed 's/^ *trust_rss_test.go:[0-9]*: //'
}

# Peak RSS (GNU time %M) of the binary on the worst input of each kind:
# the largest the input gate accepts, and the hostile shapes it refuses.
# Target: < 150 MB for each. BIN=<old binary> shows the figures before.
bench_rss_inputs() {
  echo "== peak RSS per input kind (GNU time %M; target: < 150 MB each)"
  local d
  d=$(mktemp -d)
  python3 - "$d" <<'PY'
import os, shutil, sys
d = sys.argv[1]
def comp(cat, extra=""):
    p = f"{d}/{cat}/components/edge"
    os.makedirs(p + "/manifests", exist_ok=True)
    open(p + "/component.toml", "w").write('name = "edge"\ndescription = "x"\norder = 900\nrequires = ["core"]\n' + extra)
    return p
comp("toml-inline")
n = 40 * 1024 // 6
open(f"{d}/toml-inline/catalog.toml", "w").write("x = " + "{a = " * n + "1" + "}" * n + "\n")
comp("toml-dotted", "a" + ".a" * (10 * 1024) + " = 1\n")
p = comp("cms")
open(p + "/manifests/cms.yaml", "w").write("".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n" for i in range(60000)))
open(p + "/manifests/kustomization.yaml", "w").write("resources:\n- cms.yaml\n")
p = comp("keys")
open(p + "/manifests/cm.yaml", "w").write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n" + "".join(f"  k{i}: v\n" for i in range(9900)))
open(p + "/manifests/kustomization.yaml", "w").write("resources:\n- cm.yaml\n")
open(f"{d}/config.yaml", "w").write("x: [" + "0," * 190000 + "0]\n")
open(f"{d}/payload-8m.json", "w").write('{"kind": "ImageStream", "x": [' + "0," * 999000 + "0]}")
open(f"{d}/payload-22m.json", "w").write('{"kind": "ImageStream", "x": [' + "0," * (11 << 20) + "0]}")
# Helm charts (issue 25): the hostile shapes each limit refuses, and the
# largest accepted ones.
def chart(cat, files, values=None, toml=""):
    p = comp(cat, toml + '[chart]\npath = "chart"\nnamespace = "edge"\n' + ('values = "values.yaml"\n' if values else ""))
    os.rmdir(p + "/manifests")  # a component renders one way
    os.makedirs(p + "/chart/templates", exist_ok=True)
    files.setdefault("Chart.yaml", "apiVersion: v2\nname: hello\nversion: 0.1.0\n")
    for name, data in files.items():
        os.makedirs(os.path.dirname(f"{p}/chart/{name}"), exist_ok=True)
        open(f"{p}/chart/{name}", "w").write(data)
    if values:
        open(p + "/values.yaml", "w").write(values)
    return p
cm = lambda name, v: f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  v: {v}\n"
chart("chart-tpl", {"templates/cm.yaml": cm("a", '{{ if semverCompare ">=1.36.0-0" .Capabilities.KubeVersion.Version }}{{ tpl .Values.t . }}{{ end }}')}, "t: '{{ tpl .Values.t . }}'\n")
chart("chart-repeat", {"templates/cm.yaml": cm("a", '{{ repeat 300000000 "x" }}')})
chart("chart-cms", {"templates/cm.yaml": "{{ range until 50000 }}---\n" + cm("c{{ . }}", "b") + "{{ end }}"})
crd = ["apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: bigs.example.com\nspec:\n  group: example.com\n  names:\n    kind: Big\n    plural: bigs\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n"]
i = 0
while sum(map(len, crd)) < 5 << 20:
    crd.append(f"          field{i}:\n            type: string\n            description: a field of the big resource, number {i}\n")
    i += 1
chart("chart-crd", {"crds/big.yaml": "".join(crd), "templates/cm.yaml": cm("a", "b")})
# A CRD in a packaged chart, which no YAML check saw before (4 MB: Helm's
# loader refuses a file over 5 MiB).
import hashlib, io, tarfile
p = chart("chart-crd-tgz", {})
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w:gz") as tf:
    for name, data in {"hello/Chart.yaml": "apiVersion: v2\nname: hello\nversion: 0.1.0\n", "hello/crds/big.yaml": "".join(crd)[:4 << 20].rsplit("\n          field", 1)[0] + "\n", "hello/templates/cm.yaml": cm("a", "b")}.items():
        ti = tarfile.TarInfo(name)
        ti.size = len(data.encode())
        tf.addfile(ti, io.BytesIO(data.encode()))
shutil.rmtree(p + "/chart")
open(p + "/hello-0.1.0.tgz", "wb").write(buf.getvalue())
open(p + "/component.toml", "w").write('name = "edge"\ndescription = "x"\norder = 900\nrequires = ["core"]\n[chart]\npath = "hello-0.1.0.tgz"\nnamespace = "edge"\nsha256 = "' + hashlib.sha256(buf.getvalue()).hexdigest() + '"\n')
chart("chart-cm30", {"big.txt": "x" * (4 << 20), "templates/cm.yaml": cm("a", '{{ range until 8 }}{{ $.Files.Get "big.txt" }}{{ end }}')})
chart("chart-copies", {"templates/cm.yaml": '{{ $l := list }}{{ range until 1000 }}{{ $l = append $l (repeat 1000000 "x") }}{{ end }}' + cm("a", "b")})
chart("chart-template", {"templates/_h.tpl": '{{ define "a" }}{{ template "a" . }}{{ end }}', "templates/cm.yaml": cm("a", '{{ template "a" . }}')})
chart("chart-hook", {"templates/job.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations:\n    helm.sh/hook: post-install\n" + "".join(f"{{{{ $_ := .Values.f{i} }}}}" for i in range(30))},
      "".join(f"f{i}: {{enabled: true}}\n" for i in range(30)))
chart("chart-random", {"templates/cm.yaml": cm("a", "{{ include \"x\" . }}"), "templates/_h.tpl": '{{ define "x" }}{{ tpl .Values.t . }}{{ end }}'}, "t: '{{ randAlphaNum 16 }}'\n")
# Accepted: the real podinfo chart, and charts at the output budgets.
p = chart("chart-podinfo", {}, "replicaCount: 2\nredis:\n  enabled: true\n  repository: docker.io/library/redis\n",
          '[images]\nfile = "edge"\nkeys = ["podinfo", "redis"]\n[manifests.images]\n"ghcr.io/stefanprodan/podinfo" = "podinfo"\n"docker.io/library/redis" = "redis"\n')
shutil.rmtree(p + "/chart")
shutil.copytree("testdata/charts/podinfo", p + "/chart")
os.makedirs(p + "/release", exist_ok=True)
open(p + "/release/release-edge-x86_64.json", "w").write('{"release": {"base": "1.0.0"}, "images": {"podinfo": "ghcr.io/stefanprodan/podinfo@sha256:' + "1" * 64 + '", "redis": "docker.io/library/redis@sha256:' + "2" * 64 + '"}}\n')
chart("chart-nodes", {"templates/cm.yaml": "{{ range until 950 }}---\n" + cm("c{{ . }}", "b") + "  w: x\n  x: x\n  y: x\n{{ end }}"})
chart("chart-bytes", {"big.txt": "x" * (1400 << 10), "templates/cm.yaml": "{{ range until 5 }}---\n" + cm("c{{ . }}", '{{ $.Files.Get "big.txt" }}') + "{{ end }}"})
PY
  mkdir -p "$d/rel"
  rss() { # rss <label> <args...>
    local label=$1; shift
    /usr/bin/time -f '%M %e %x' -o "$d/time" timeout 300 "$BIN" "$@" >/dev/null 2>"$d/err" || true
    read -r kb secs code < <(tail -1 "$d/time")
    printf '%-58s %7.1f MB %6.1fs exit %s: %.90s\n' "$label" "$((kb))e-3" "$secs" "$code" "$(grep -v '^warning' "$d/err" | head -1)"
  }
  local b=(build --profile minimal --arch x86_64 --output "$d/out")
  rss "catalog.toml: 40 KB nested inline tables (refused)" "${b[@]}" --catalog "$d/toml-inline" --with edge
  rss "component.toml: 20 KB dotted key (refused)" "${b[@]}" --catalog "$d/toml-dotted" --with edge
  rss "manifests/: 60,000 ConfigMaps, 3.6 MB (refused)" "${b[@]}" --catalog "$d/cms" --with edge
  rss "manifests/: ConfigMap of 9,900 keys (accepted, at the budget)" "${b[@]}" --catalog "$d/keys" --with edge
  rss "--config: 190,000 YAML nodes (decoded, then refused)" "${b[@]}" --config "$d/config.yaml"
  rss "release update --payload: 999,000 values (decoded)" release update "$d/rel" --payload "x86_64=$d/payload-8m.json" --dry-run
  rss "release update --payload: 22 MB (refused by size)" release update "$d/rel" --payload "x86_64=$d/payload-22m.json" --dry-run
  rss "chart: tpl of itself (refused)" "${b[@]}" --catalog "$d/chart-tpl" --with edge
  rss "chart: repeat 300000000 (refused)" "${b[@]}" --catalog "$d/chart-repeat" --with edge
  rss "chart: 50,000 ConfigMaps from a range (refused)" "${b[@]}" --catalog "$d/chart-cms" --with edge
  rss "chart: a 5 MB CRD (refused)" "${b[@]}" --catalog "$d/chart-crd" --with edge
  rss "chart: a 4 MB CRD in a .tgz (refused)" "${b[@]}" --catalog "$d/chart-crd-tgz" --with edge
  rss "chart: a 32 MB ConfigMap from .Files (refused)" "${b[@]}" --catalog "$d/chart-cm30" --with edge
  rss "chart: 1000 copies of a 1 MB string (refused)" "${b[@]}" --catalog "$d/chart-copies" --with edge
  rss "chart: the template action recursing (refused)" "${b[@]}" --catalog "$d/chart-template" --with edge
  rss "chart: a hook, 30 values probed (refused)" "${b[@]}" --catalog "$d/chart-hook" --with edge
  rss "chart: randAlphaNum through include and tpl (refused)" "${b[@]}" --catalog "$d/chart-random" --with edge
  rss "matrix: 4.19 and 5.0, the 5.0 cell's tpl recursing (one refused)" matrix --profile minimal --arch x86_64 --release 4.19,5.0 --output "$d/m" --catalog "$d/chart-tpl" --with edge
  rss "chart: podinfo with redis (accepted)" "${b[@]}" --catalog "$d/chart-podinfo" --with edge
  rss "chart: 950 ConfigMaps, near the 20,000-node budget (accepted)" "${b[@]}" --catalog "$d/chart-nodes" --with edge
  rss "chart: 5 ConfigMaps of 1.4 MB, 7 MB (accepted)" "${b[@]}" --catalog "$d/chart-bytes" --with edge
  rm -rf "$d"
}

# day2: what crosses the air gap on day 2 (day2_bundles, then day2_split;
# each runs alone too: `./hack/bench.sh day2_split`). The bench set (24
# images, ~1 GiB unique, three shared 128 MiB bases) at two releases (the
# second replaces a layer of every third image) and a minimal plan of its
# first 8 images.
# 1. Bytes written by mirror --since for minimal -> full and release 1 ->
#    release 2, against the new unique blobs plus every manifest of the new
#    plan (computed from the full archives with Python's tarfile: goal
#    1.00x), beside the full archive and the ratio saved.
# 2. Applying the release-2 bundle vs mirror --from the full release-2
#    archive, into a registry and into a layout that hold release 1 (each
#    destination prepared twice, identically): wall time.
# 3. Prune of the layout that took both releases, keeping release 2: the
#    bytes prune frees against the bytes of the blob files no image of
#    release 2 reaches (walked from index.json with Python: goal 1.00x).
# 4. (day2_split) Split and rejoin of a ~2.2 GB archive (64 images):
#    mirror --from the archive --max-size 700MB, and mirror --from the
#    first part into one file, against cat of the same bytes (each followed
#    by sync of what it wrote, as mirror syncs its files): throughput (goal
#    >= 0.8x) and peak RSS (goal < 100 MB); the joined archive must be the
#    original, byte for byte. DAY2_SPLIT_IMAGES=N sets the set's size.
#    Everything is removed at the end (~15 GB at the peak).
day2_work=
day2_cleanup() {
  reg_cleanup
  if [ -n "$day2_work" ]; then rm -rf "$day2_work"; fi
  day2_work=
}

bench_day2() {
  bench_day2_bundles
  bench_day2_split
}

bench_day2_bundles() {
  echo "== day 2: differential bundles (goal: bytes = new unique blobs + manifests, 1.00x), applying them, prune (goal: freed = unreachable, 1.00x)"
  ensure docker-registry docker-registry
  ensure curl curl
  [ -x /usr/bin/time ] || ensure time time
  day2_work=$(mktemp -d "${TMPDIR:-/tmp}/mc-bench-day2.XXXXXX")
  reg_work=$day2_work/registries
  trap day2_cleanup EXIT
  local w=$day2_work src sa sb
  src=$(free_port) sa=$(free_port) sb=$(free_port)
  start_registry "$reg_work/src" "$src"
  start_registry "$reg_work/site-a" "$sa"
  start_registry "$reg_work/site-b" "$sb"
  echo "set, release 1: $(go run ./hack/benchmirror -registry "127.0.0.1:$src" -lock "$w/r1.lock.json" -minimal 8 -lock-minimal "$w/minimal.lock.json")"
  echo "set, release 2: $(go run ./hack/benchmirror -registry "127.0.0.1:$src" -lock "$w/r2.lock.json" -release 2)"
  local m=("$BIN" mirror --quiet --output json)
  "${m[@]}" --lock "$w/minimal.lock.json" --to "oci-archive:$w/minimal.tar" >/dev/null
  "${m[@]}" --lock "$w/r1.lock.json" --to "oci-archive:$w/r1.tar" >/dev/null
  "${m[@]}" --lock "$w/r2.lock.json" --to "oci-archive:$w/r2.tar" >/dev/null
  "${m[@]}" --lock "$w/r1.lock.json" --since "$w/minimal.lock.json" --to "oci-archive:$w/minimal-to-full.tar" >"$w/minimal-to-full.json"
  "${m[@]}" --lock "$w/r2.lock.json" --since "$w/r1.lock.json" --to "oci-archive:$w/r1-to-r2.tar" >"$w/r1-to-r2.json"
  python3 - "$w" <<'PY'
import json, sys, tarfile
w = sys.argv[1]
def blobs(path):
    """digest -> size of the blobs, and the digests of the manifests and indexes index.json reaches."""
    with tarfile.open(path) as t:
        sizes = {m.name[len("blobs/sha256/"):]: m.size for m in t.getmembers() if m.isfile() and m.name.startswith("blobs/sha256/")}
        manifests, todo = set(), [d["digest"][7:] for d in json.load(t.extractfile("index.json"))["manifests"]]
        while todo:
            d = todo.pop()
            if d in manifests:
                continue
            manifests.add(d)
            doc = json.load(t.extractfile("blobs/sha256/" + d))
            todo += [c["digest"][7:] for c in doc.get("manifests", [])]
    return sizes, manifests
mib = lambda b: f"{b / 2**20:,.1f} MiB"
for name, old, new in (("minimal -> full", "minimal", "r1"), ("release 1 -> release 2", "r1", "r2")):
    bundle = {"minimal": "minimal-to-full", "r1": "r1-to-r2"}[old]
    o, _ = blobs(f"{w}/{old}.tar")
    n, nm = blobs(f"{w}/{new}.tar")
    b, _ = blobs(f"{w}/{bundle}.tar")
    want = sum(s for d, s in n.items() if d in nm or d not in o)
    new_unique = sum(s for d, s in n.items() if d not in nm and d not in o)
    got = sum(b.values())
    import os
    size, full = os.path.getsize(f"{w}/{bundle}.tar"), os.path.getsize(f"{w}/{new}.tar")
    summ = json.load(open(f"{w}/{bundle}.json"))
    print(f"{name}: bundle blobs {got:,} bytes = new unique blobs {new_unique:,} + manifests {want - new_unique:,} -> {got / want:.2f}x; "
          f"{summ['blobs_omitted']} blobs ({mib(summ['bytes_omitted'])}) left out")
    print(f"  archive: bundle {mib(size)} vs full {mib(full)}: {size / full:.3f} of it, {100 * (1 - size / full):.1f}% saved (tar headers and the bundle file: {size - got:,} bytes)")
PY

  # Applying: into two registries and two layouts holding release 1.
  "${m[@]}" --from "oci-archive:$w/r1.tar" --to "docker://127.0.0.1:$sa/site" >/dev/null
  "${m[@]}" --from "oci-archive:$w/r1.tar" --to "docker://127.0.0.1:$sb/site" >/dev/null
  "${m[@]}" --from "oci-archive:$w/r1.tar" --to "oci:$w/site-a" >/dev/null
  cp -a "$w/site-a" "$w/site-b"
  local t
  for t in "apply the bundle|--from oci-archive:$w/r1-to-r2.tar --to docker://127.0.0.1:$sa/site" \
    "mirror --from the full archive|--from oci-archive:$w/r2.tar --to docker://127.0.0.1:$sb/site" \
    "apply the bundle|--from oci-archive:$w/r1-to-r2.tar --to oci:$w/site-a" \
    "mirror --from the full archive|--from oci-archive:$w/r2.tar --to oci:$w/site-b"; do
    local label=${t%%|*} args=${t#*|}
    cat "$w/r1-to-r2.tar" "$w/r2.tar" >/dev/null # both warm
    # shellcheck disable=SC2086
    /usr/bin/time -o "$w/apply.time" -f '%e %M' "${m[@]}" $args >"$w/apply.json"
    read -r secs kb <"$w/apply.time"
    python3 - "$label" "${args##* }" "$secs" "$kb" "$w/apply.json" <<'PY'
import json, sys
label, to, secs, kb, path = sys.argv[1:]
s = json.load(open(path))
moved = s["bytes_fetched"]
print(f"{label:32} into {to.split(':')[0]:7}: {float(secs):6.2f} s wall, peak RSS {int(kb) / 1024:5.1f} MiB, {moved / 2**20:7.1f} MiB written or uploaded, {s['bytes_skipped'] / 2**20:7.1f} MiB found present")
PY
  done

  # Prune: site-a holds release 1 and release 2; keep release 2.
  python3 - "$w/site-a" "$w/r2.lock.json" >"$w/unreachable" <<'PY'
import json, os, sys
site, lock = sys.argv[1:]
keep = {i["ref"] for i in json.load(open(lock))["images"]}
blobs = os.path.join(site, "blobs", "sha256")
reached, todo = set(), [d for d in json.load(open(os.path.join(site, "index.json")))["manifests"]
                        if d.get("annotations", {}).get("org.opencontainers.image.ref.name") in keep]
while todo:
    d = todo.pop()
    h = d["digest"][7:]
    if h in reached:
        continue
    reached.add(h)
    if d["mediaType"].endswith(("manifest.v1+json", "manifest.v2+json", "list.v2+json", "index.v1+json")) and os.path.exists(os.path.join(blobs, h)):
        doc = json.load(open(os.path.join(blobs, h)))
        todo += doc.get("manifests", []) + ([doc["config"]] if "config" in doc else []) + doc.get("layers", [])
print(sum(os.path.getsize(os.path.join(blobs, f)) for f in os.listdir(blobs) if f not in reached))
PY
  local before after
  before=$(du -sb "$w/site-a/blobs" | cut -f1)
  /usr/bin/time -o "$w/prune.time" -f '%e %M' "$BIN" prune --keep "$w/r2.lock.json" --apply --output json "oci:$w/site-a" >"$w/prune.json"
  after=$(du -sb "$w/site-a/blobs" | cut -f1)
  python3 - "$w/prune.json" "$(cat "$w/unreachable")" "$before" "$after" "$(cat "$w/prune.time")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
unreachable, before, after = (int(a) for a in sys.argv[2:5])
secs, kb = sys.argv[5].split()
mib = lambda b: f"{b / 2**20:,.1f} MiB"
print(f"prune --keep release 2: freed {r['bytes_freed']:,} bytes ({mib(r['bytes_freed'])}, {len(r['blobs'])} blobs, {len(r['images'])} images) "
      f"vs {unreachable:,} bytes no kept image reaches -> {r['bytes_freed'] / unreachable:.2f}x; "
      f"the layout's blobs went from {mib(before)} to {mib(after)} ({mib(before - after)} on disk); {float(secs):.2f} s, peak RSS {int(kb) / 1024:.1f} MiB")
PY
  day2_cleanup
}

bench_day2_split() {
  echo "== day 2: split and rejoin (goal: >= 0.8x cat, peak RSS < 100 MB)"
  ensure docker-registry docker-registry
  ensure curl curl
  [ -x /usr/bin/time ] || ensure time time
  day2_work=$(mktemp -d "${TMPDIR:-/tmp}/mc-bench-day2.XXXXXX")
  trap day2_cleanup EXIT
  local w=$day2_work src n=${DAY2_SPLIT_IMAGES:-64}
  local m=("$BIN" mirror --quiet --output json)
  src=$(free_port)
  reg_work=$w/registries-big
  start_registry "$reg_work/src" "$src"
  echo "set, $n images: $(go run ./hack/benchmirror -registry "127.0.0.1:$src" -lock "$w/big.lock.json" -images "$n" -prefix big)"
  "${m[@]}" --lock "$w/big.lock.json" --to "oci-archive:$w/big.tar" >/dev/null
  reg_cleanup
  local bytes
  bytes=$(stat -c %s "$w/big.tar")
  timed() { # timed <name> <command...>: GNU time %e %M into $w/<name>.time
    local name=$1; shift
    sync # what the step before wrote is not this one's to flush
    /usr/bin/time -o "$w/$name.time" -f '%e %M' "$@" >/dev/null
  }
  cat "$w/big.tar" >/dev/null
  timed split "${m[@]}" --from "oci-archive:$w/big.tar" --to "oci-archive:$w/set.tar" --max-size 700MB
  cat "$w/big.tar" >/dev/null
  timed cat-split sh -c "cat '$w/big.tar' >'$w/copy.tar' && sync '$w/copy.tar'"
  rm -f "$w/copy.tar"
  cat "$w"/set.tar.0* >/dev/null
  timed join "${m[@]}" --from "oci-archive:$w/set.tar.001" --to "oci-archive:$w/joined.tar"
  cat "$w"/set.tar.0* >/dev/null
  timed cat-join sh -c "cat '$w'/set.tar.0* >'$w/cat-joined.tar' && sync '$w/cat-joined.tar'"
  local same=no
  cmp -s "$w/joined.tar" "$w/big.tar" && cmp -s "$w/cat-joined.tar" "$w/big.tar" && same=yes
  python3 - "$bytes" "$(ls "$w"/set.tar.0* | wc -l)" "$same" "$(cat "$w/split.time")" "$(cat "$w/cat-split.time")" "$(cat "$w/join.time")" "$(cat "$w/cat-join.time")" <<'PY'
import sys
n, parts, same = int(sys.argv[1]), sys.argv[2], sys.argv[3]
(s, skb), (cs, _), (j, jkb), (cj, _) = (a.split() for a in sys.argv[4:8])
gbs = lambda t: n / float(t) / 1e9
print(f"archive: {n:,} bytes ({n / 1e9:.2f} GB), {parts} parts of at most 700 MB; joined = original: {same}")
print(f"split:  mirror --max-size {float(s):5.2f} s ({gbs(s):.2f} GB/s), cat {float(cs):5.2f} s ({gbs(cs):.2f} GB/s): {float(cs) / float(s):.2f}x cat; peak RSS {int(skb) / 1024:.1f} MiB")
print(f"rejoin: mirror --from the parts {float(j):5.2f} s ({gbs(j):.2f} GB/s), cat {float(cj):5.2f} s ({gbs(cj):.2f} GB/s): {float(cj) / float(j):.2f}x cat; peak RSS {int(jkb) / 1024:.1f} MiB")
PY
  day2_cleanup
}

# What build --sign-key and verify cost (issue 29: signing and verifying add
# at most 10% to build): the full profile built with and without a signing
# key (cosign's ECDSA key, scrypt-encrypted as cosign writes it; the key is
# decrypted beside resolution and rendering), and verify of the signed
# output, whole processes; then the same in process (attest, provenance).
bench_attest() {
  echo "== build --profile full with and without --sign-key, and verify of the signed output (goal: each <= 10% of build)"
  ensure hyperfine hyperfine
  local d
  d=$(mktemp -d)
  export MICROSHIFT_COMPOSE_CACHE="$d/cache"
  [ -x bin/cosign ] || { echo "bench: bin/cosign is missing (make test-tools builds it)" >&2; exit 1; }
  COSIGN_PASSWORD=bench bin/cosign generate-key-pair --output-key-prefix "$d/cosign" >/dev/null 2>&1
  "$BIN" build --profile full --arch x86_64 --output "$d/plain" >/dev/null
  COSIGN_PASSWORD=bench "$BIN" build --profile full --arch x86_64 --output "$d/signed" --sign-key "$d/cosign.key" >/dev/null
  COSIGN_PASSWORD=bench hyperfine --warmup 3 --runs 30 -N --export-json "$d/h.json" \
    "$BIN build --profile full --arch x86_64 --output $d/plain" \
    "$BIN build --profile full --arch x86_64 --output $d/signed --sign-key $d/cosign.key" \
    "$BIN verify $d/signed --key $d/cosign.pub" >/dev/null
  unset MICROSHIFT_COMPOSE_CACHE
  python3 - "$d/h.json" <<'PY'
import json, sys
plain, signed, verify = json.load(open(sys.argv[1]))["results"]
cpu = lambda r: (r["user"] + r["system"]) * 1000
for name, r in (("build", plain), ("build --sign-key", signed), ("verify", verify)):
    print(f"{name}: median {r['median']*1000:.1f} ms wall (min {r['min']*1000:.1f}), {cpu(r):.1f} ms CPU, over {len(r['times'])} runs")
print(f"signing adds {(signed['median']/plain['median']-1)*100:+.1f}% wall, {(cpu(signed)/cpu(plain)-1)*100:+.1f}% CPU to build")
print(f"verify is {verify['median']/plain['median']*100:.1f}% of build's wall time, {cpu(verify)/cpu(plain)*100:.1f}% of its CPU")
PY
  go test ./attest ./render/provenance -run '^$' -bench 'Decrypt|Sign$|Verify$' -benchtime 10x -benchmem | grep -E '^Benchmark' |
    awk '{ name = $1; sub(/-[0-9]+$/, "", name); printf "in process: %-20s %7.1f ms, %s B\n", name, $3 / 1e6, $5 }'
  rm -rf "$d"
}

bench_operators() {
  echo "== build --operator from a real-shaped catalog (hack/benchcatalog: 200 packages, 5,000 bundles, each with its CSV and a CRD, >= 50 MB of FBC) in an OCI layout, beside opm render of the same configs (targets: seconds, peak RSS < 150 MB)"
  ensure hyperfine hyperfine
  [ -x /usr/bin/time ] || ensure time time
  local work opm
  work=$(mktemp -d "${TMPDIR:-/tmp}/mc-bench-operators.XXXXXX")
  # The pinned opm (the Makefile's OPM_VERSION, which make exports).
  opm=$(./hack/tool.sh go github.com/operator-framework/operator-registry/cmd/opm "${OPM_VERSION:-$(sed -n 's/^OPM_VERSION ?= //p' Makefile)}" json1,netgo,osusergo,containers_image_openpgp)
  echo "catalog: $(go run ./hack/benchcatalog -out "$work")"
  export MICROSHIFT_COMPOSE_CACHE="$work/cache"
  local build=("$BIN" build --profile minimal --arch x86_64 --operator-catalog "oci:$work/layout" --operator operator-009 --operator operator-123 --output "$work/out")
  "${build[@]}" >/dev/null 2>&1
  /usr/bin/time -o "$work/build.rss" -f '%M' "${build[@]}" >/dev/null 2>&1
  /usr/bin/time -o "$work/opm.rss" -f '%M' "$opm" render "$work/configs" -o json >/dev/null 2>&1
  hyperfine --warmup 1 --runs 5 -N --export-json "$work/h.json" "${build[*]}" "$opm render $work/configs -o json" >/dev/null
  unset MICROSHIFT_COMPOSE_CACHE
  python3 - "$work" <<'PY'
import json, sys
d = sys.argv[1]
ours, opm = json.load(open(f"{d}/h.json"))["results"]
rss = lambda f: int(open(f"{d}/{f}").read().split()[-1]) / 1024
cpu = lambda r: r["user"] + r["system"]
print(f"microshift-compose build --operator (2 packages and a dependency, filtered catalog written): median {ours['median']:.2f} s wall, {cpu(ours):.2f} s CPU, peak RSS {rss('build.rss'):.0f} MiB")
print(f"opm render of the configs (reads every object, writes them all): median {opm['median']:.2f} s wall, {cpu(opm):.2f} s CPU, peak RSS {rss('opm.rss'):.0f} MiB")
PY
  rm -rf "$work"
}

for s in "${sections[@]}"; do "bench_$s"; done
