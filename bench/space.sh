#!/usr/bin/env bash
# What giving back the space of deleted files costs and gives
# (store/sqlite/space.rs): tokio 1.50.0 indexed, then its tests/ and
# src/runtime/ deleted (half its text, as a vendored tree dropped), and the
# run that removes them
# timed, with index.db's size after it; by binaries before and after the
# change, each on its own copy. Then a warm run with nothing changed, which
# must not rewrite anything.
#
# usage: bench/space.sh BEFORE_BIN_DIR AFTER_BIN_DIR
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
before=${1:?usage: bench/space.sh BEFORE_BIN_DIR AFTER_BIN_DIR}
after=${2:?usage: bench/space.sh BEFORE_BIN_DIR AFTER_BIN_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$("$repo/bench/tokio-source.sh")
row() { printf '%-44s %12s\n' "$1" "$2"; }
size_of() { stat -c %s "$1/.vecgrep/index.db"; }
echo "tokio 1.50.0: $(find "$src" -type f | wc -l) files; tests/ and src/runtime/: $(find "$src/tests" "$src/src/runtime" -type f | wc -l) of them"
for side in before after; do
  bin=${!side}
  tree="$work/$side"
  cp -r "$src" "$tree" && mkdir "$tree/.vecgrep"
  (cd "$tree" && "$bin/vg-index" -q --index-warn-threshold 0 . >/dev/null)
  row "$side: index.db, whole tree" "$(size_of "$tree") B"
  rm -rf "$tree/tests" "$tree/src/runtime"
  sleep 3 # past the two seconds within which a change is not trusted
  row "$side: run removing tests/ and src/runtime/" "$(python3 "$repo/bench/median-ms.py" 1 bash -c "cd '$tree' && '$bin/vg-index' -q .") ms"
  row "$side: index.db after it" "$(size_of "$tree") B"
  row "$side: warm run, nothing changed" "$(python3 "$repo/bench/median-ms.py" 3 bash -c "cd '$tree' && '$bin/vg-index' -q .") ms"
  row "$side: index.db after that" "$(size_of "$tree") B"
done
