#!/usr/bin/env bash
# Prints the path of tokio 1.50.0's source in cargo's registry, the tree the
# benchmarks measure, fetching it first (a throwaway manifest and `cargo
# fetch`) if it is not there. The registry copy is read, never written.
set -euo pipefail
find_src() { ls -d "$HOME"/.cargo/registry/src/*/tokio-1.50.0 2>/dev/null | head -1 || true; }
src=$(find_src)
if [[ -z $src ]]; then
  fetch=$(mktemp -d)
  trap 'rm -rf "$fetch"' EXIT
  mkdir -p "$fetch/src" && echo 'fn main() {}' > "$fetch/src/main.rs"
  printf '[package]\nname = "fetch-bench"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\ntokio = "=1.50.0"\n' > "$fetch/Cargo.toml"
  (cd "$fetch" && cargo fetch -q)
  src=$(find_src)
fi
[[ -n $src ]] || { echo "tokio-source: cannot fetch tokio 1.50.0" >&2; exit 2; }
echo "$src"
