#!/bin/sh
# The manual path DESIGN.md describes, which `make bench` times beside
# `build`: a blueprint header, then `jq '.images[]'` over the core release
# file into [[containers]] entries.
#   hack/jq-path.sh <release-<arch>.json> <stream> <blueprint.toml>
set -e
{
  printf 'name = "microshift-full"\ndescription = "MicroShift"\nversion = "%s.0"\n\n[[packages]]\nname = "microshift"\nversion = "%s.*"\n\n' "$2" "$2"
  jq -r '.images[] | "[[containers]]\nsource = \"" + . + "\"\n"' "$1"
} >"$3"
