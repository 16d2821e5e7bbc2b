#!/usr/bin/env bash
# Runs every Go fuzz target in the repository for a while each, one at a
# time (the fuzzer already uses every core).
#
#   hack/fuzz.sh [FUZZTIME]        e.g. hack/fuzz.sh 60s   (make fuzz; FUZZTIME=20s for less)
#
# Targets are found with `go test -list '^Fuzz'` in the packages whose tests
# declare one. A failing input is written to <pkg>/testdata/fuzz/<Target>/;
# commit it: it then runs as a regression seed in every `go test`.
# FUZZMINIMIZETIME bounds how long the fuzzer minimizes each new input it
# finds (interesting or failing); that time is not part of -fuzztime, so a
# target's wall time is FUZZTIME plus its build plus minimization. The seeds
# are real release files and bundles (up to ~19 KB), and minimizing those
# for the default 60s each could take many minutes per target.
set -euo pipefail

fuzztime="${1:-60s}"
minimize="${FUZZMINIMIZETIME:-5s}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# The Makefile exports these; set them when the script runs on its own.
if [ -z "${GOFLAGS:-}" ]; then
  GOFLAGS="-buildvcs=false -tags=$(make -s --no-print-directory tags)"
  export GOFLAGS
fi
export CGO_ENABLED="${CGO_ENABLED:-0}"

mapfile -t pkgs < <(git grep --untracked -l -E '^func Fuzz[A-Za-z0-9_]*\(' -- '*_test.go' | xargs -r -n1 dirname | sort -u)
if [ ${#pkgs[@]} -eq 0 ]; then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi

failed=()
times=()
count=0
for dir in "${pkgs[@]}"; do
  pkg="./$dir"
  mapfile -t targets < <(go test -list '^Fuzz' "$pkg" | grep -E '^Fuzz')
  for target in "${targets[@]}"; do
    count=$((count + 1))
    echo "== $pkg $target ($fuzztime)"
    start=$(date +%s)
    if ! go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize"; then
      failed+=("$pkg $target")
    fi
    times+=("$(printf '%-40s %-28s %4ds' "$pkg" "$target" $(($(date +%s) - start)))")
  done
done

echo "fuzz: ran $count targets for $fuzztime each (wall time, build and minimization included):"
printf '  %s\n' "${times[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'fuzz: FAILED %s\n' "${failed[@]}" >&2
  exit 1
fi
