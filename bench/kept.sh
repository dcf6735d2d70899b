#!/usr/bin/env bash
# What checking the chunks a file keeps costs (index::kept): a run that
# finds every file of tokio 1.50.0 with the bytes the index has for it and
# new stamps (a `touch` of the tree; a clone or a `cp -a` is the same), by
# binaries before and after the check, each on its own copy; and a warm
# run with nothing changed, which reads no file and checks nothing.
#
# usage: bench/kept.sh BEFORE_BIN_DIR AFTER_BIN_DIR
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
before=${1:?usage: bench/kept.sh BEFORE_BIN_DIR AFTER_BIN_DIR}
after=${2:?usage: bench/kept.sh BEFORE_BIN_DIR AFTER_BIN_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$("$repo/bench/tokio-source.sh")
row() { printf '%-52s %8s ms\n' "$1" "$2"; }
touched_ms() { # bin dir: median of 3 runs, each after a touch of every file
  local times=() t
  for _ in 1 2 3; do
    find "$2" -path "$2/.vecgrep" -prune -o -type f -exec touch {} +
    sleep 3 # past the two seconds within which a change is not trusted
    t=$(python3 "$repo/bench/median-ms.py" 1 bash -c "cd '$2' && '$1/vg-index' -q .")
    times+=("$t")
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 2p
}
for side in before after; do
  bin=${!side}
  cp -r "$src" "$work/$side" && mkdir "$work/$side/.vecgrep"
  (cd "$work/$side" && "$bin/vg-index" -q --index-warn-threshold 0 . >/dev/null)
done
echo "tokio 1.50.0: $(find "$src" -type f | wc -l) files; medians of 3 runs"
for side in before after; do
  bin=${!side}
  row "$side: run after a touch of every file" "$(touched_ms "$bin" "$work/$side")"
  sleep 3
  (cd "$work/$side" && "$bin/vg-index" -q . >/dev/null)
  row "$side: warm run, nothing changed" "$(python3 "$repo/bench/median-ms.py" 3 bash -c "cd '$work/$side' && '$bin/vg-index' -q .")"
done
