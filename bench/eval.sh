#!/usr/bin/env bash
# Retrieval quality on the shared dev evals, as one table: vecgrep in each
# ranking mode beside the BM25 window baseline (k=10, threshold 0).
#
# usage: bench/eval.sh [EVAL_DIR] [BIN_DIR]
#   EVAL_DIR  where the evals are (built there by ../shared/eval if missing;
#             default: $TMPDIR/vg-evals)
#   BIN_DIR   vecgrep binaries (default: target/release, built if missing)
# env: EVALS="py-logging py-asyncio"  to run a subset;
#      MODES="hybrid semantic"        to run some modes;  BASELINE=0 to skip bm25;
#      MAX_QUERIES=N                  to run the first N queries of each eval.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
evals_src=${VG_EVAL_TOOLS:-$repo/../shared/eval}
dest=${1:-${TMPDIR:-/tmp}/vg-evals}
bin=${2:-$repo/target/release}
modes=${MODES:-hybrid semantic lexical}
names=${EVALS:-py-logging py-asyncio rs-regex-automata}

[[ -x $bin/vecgrep ]] || (cd "$repo" && cargo build --release --locked -q)
if [[ ! -d $dest/py-logging ]]; then
  "$evals_src/make_dev_evals.sh" "$dest" >&2
fi
export PATH="$bin:$PATH"

field() { python3 -c "import json,sys; d=json.loads(sys.stdin.read().strip().splitlines()[-1]); print(d.get('$1','-'))"; }
run_eval() { python3 "$evals_src/run_eval.py" ${MAX_QUERIES:+--max-queries $MAX_QUERIES} "$@"; }
printf '%-20s %-10s %8s %8s %6s %6s %9s %8s\n' eval tool mrr@10 file_mrr r@10 span p50_ms vs_bm25
for name in $names; do
  dir=$dest/$name
  # The index is built once per eval (the first mode's --index) and reused.
  (cd "$dir/tree" && vecgrep -q --index-warn-threshold 0 --index-only . >/dev/null)
  base=""
  if [[ ${BASELINE:-1} != 0 ]]; then
    out=$(run_eval "$dir" --name bm25 --cli "python3 $evals_src/bm25_baseline.py {query} . -k {k}")
    base=$(field mrr@10 <<<"$out")
    printf '%-20s %-10s %8s %8s %6s %6s %9s %8s\n' "$name" bm25 "$base" "$(field file_mrr <<<"$out")" \
      "$(field r10 <<<"$out")" "$(field median_result_lines <<<"$out")" "$(field latency_p50_ms <<<"$out")" 1.00
  fi
  for mode in $modes; do
    out=$(run_eval "$dir" --name "vecgrep-$mode" \
      --cli "vecgrep -q --no-index --json --mode $mode -k {k} --threshold 0 {query} .")
    mrr=$(field mrr@10 <<<"$out")
    ratio=-
    [[ -n $base && $base != "-" ]] && ratio=$(python3 -c "print(f'{$mrr/$base:.2f}')")
    printf '%-20s %-10s %8s %8s %6s %6s %9s %8s\n' "$name" "$mode" "$mrr" "$(field file_mrr <<<"$out")" \
      "$(field r10 <<<"$out")" "$(field median_result_lines <<<"$out")" "$(field latency_p50_ms <<<"$out")" "$ratio"
  done
done
