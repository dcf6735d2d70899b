#!/usr/bin/env bash
# What keeping each file's ctime costs, side by side on the tokio 1.50.0
# source: a warm run with nothing changed, by binaries before and after
# the change; the one run after it that reads every file of an older index
# once to record the ctimes; and runs that find files changed too recently
# to trust (read again, not embedded).
#
# usage: bench/stamps.sh BEFORE_BIN_DIR AFTER_BIN_DIR
#   BEFORE_BIN_DIR  binaries of a version without files.ctime_ns
#   AFTER_BIN_DIR   binaries of this version
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
before=${1:?usage: bench/stamps.sh BEFORE_BIN_DIR AFTER_BIN_DIR}
after=${2:?usage: bench/stamps.sh BEFORE_BIN_DIR AFTER_BIN_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$("$repo/bench/tokio-source.sh")
cp -r "$src" "$work/tokio"
cd "$work/tokio"
mkdir .vecgrep
# Every file older than the two seconds within which a change is not trusted.
sleep 3

median_ms() { python3 "$repo/bench/median-ms.py" "$@"; } # runs, command...
once_ms() { median_ms 1 "$@"; }
row() { printf '%-58s %8s ms\n' "$1" "$2"; }

echo "tokio 1.50.0: $(find . -type f | grep -v '^./.vecgrep' | wc -l) files; medians of 5 runs unless said"
"$before/vg-index" -q --index-warn-threshold 0 . >/dev/null
row "before: warm run, nothing changed" "$(median_ms 5 "$before/vg-index" -q .)"
row "after: first run on the older index (reads every file once)" "$(once_ms "$after/vg-index" -q .)"
row "after: warm run, nothing changed" "$(median_ms 5 "$after/vg-index" -q .)"
# Stat data alone changed (chmod moves the ctime): read and hashed, not embedded.
find . -name '*.rs' -not -path './.vecgrep/*' -exec chmod u+w {} +
row "after: run after a chmod of every file (read, not embedded)" "$(once_ms "$after/vg-index" -q .)"
row "after: the next run (files changed <2 s before it, read again)" "$(once_ms "$after/vg-index" -q .)"
sleep 3
"$after/vg-index" -q . >/dev/null
row "after: warm run once settled" "$(median_ms 5 "$after/vg-index" -q .)"
