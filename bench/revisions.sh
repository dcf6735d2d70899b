#!/usr/bin/env bash
# Revisions without checkout, on a real history: tokio 1.50 indexed in the
# working tree, then 1.49 indexed with --rev; then the working tree switched
# between them, with and without the other release indexed as a revision.
# Prints what each run embedded (against what it copied) and its time.
#
# usage: bench/revisions.sh [HISTORY] [BIN_DIR]
#   HISTORY  a repository of tokio releases (bench/tokio-releases.sh; made if missing,
#            default $TMPDIR/tokio-hist)
#   BIN_DIR  vecgrep binaries (default: target/release, built if missing)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
hist=${1:-${TMPDIR:-/tmp}/tokio-hist}
bin=${2:-$repo/target/release}
[[ -x $bin/vg-index ]] || (cd "$repo" && cargo build --release --locked -q)
[[ -d $hist/.git ]] || "$repo/bench/tokio-releases.sh" "$hist" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$bin:$PATH"

summary() { python3 -c '
import json, sys
s = [json.loads(l) for l in sys.stdin if l.strip()][-1]
share = s["embedded"] / s["chunks"] if s["chunks"] else 0
f, c, e, k, t = s["files"], s["chunks"], s["embedded"], s["copied"], s["seconds"]
print(f"{f:>6} {c:>7} {e:>8} {k:>7} {share:>8.1%} {t:>8.1f}")'; }
row() { printf '%-52s ' "$1"; shift; "$@" 2>/dev/null | summary; }
index() { (cd "$1" && vg-index -q --index-warn-threshold 0 "${@:2}" . | grep '"summary"'); }

git clone -q "$hist" "$work/a"
printf '%-52s %6s %7s %8s %7s %8s %8s\n' run files chunks embedded copied share seconds
row "working tree at 1.50, cold" index "$work/a"
cp -R "$work/a" "$work/b"
row "--rev v1.49.0 (1.50 indexed)" index "$work/a" --rev v1.49.0
printf '%-52s %s\n' "  size of the 1.49 index" "$(du -sh "$work/a/.vecgrep/revs" | cut -f1) (working tree's: $(du -sh "$work/a/.vecgrep/index.db" | cut -f1))"
git -C "$work/b" checkout -q v1.49.0
row "checkout 1.49, no revision indexed" index "$work/b"
git -C "$work/b" checkout -q main
row "checkout back to 1.50, no revision indexed" index "$work/b"
git -C "$work/a" checkout -q v1.49.0
row "checkout 1.49, 1.49 indexed as a revision" index "$work/a"
row "--rev main (1.50, from its working index and 1.49)" index "$work/a" --rev main
git -C "$work/a" checkout -q main
row "checkout back to 1.50, both indexed as revisions" index "$work/a"
