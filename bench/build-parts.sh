#!/usr/bin/env bash
# What the optional parts cost to build: a clean release build of one tool
# (default vg-query) with every feature of bins/Cargo.toml, then with none
# (no vg-mcp, no vg-pick, no shared store), each in a fresh target
# directory. Prints wall and CPU seconds and how many crates were built.
#
# usage: bench/build-parts.sh [BIN]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-vg-query}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$repo"
for variant in all none; do
  flags=()
  [[ $variant == none ]] && flags=(--no-default-features)
  target="$work/target-$variant"
  /usr/bin/time -f "%e %U %S" -o "$work/time" \
    env CARGO_TARGET_DIR="$target" cargo build --release --locked -q -p vecgrep-bins --bin "$bin" "${flags[@]}"
  read -r wall user sys < "$work/time"
  crates=$(find "$target/release/deps" -name '*.rlib' | wc -l)
  echo "$bin, features $variant: ${wall} s wall, $(python3 -c "print(round($user + $sys))") s CPU, $crates crates"
  rm -rf "$target"
done
