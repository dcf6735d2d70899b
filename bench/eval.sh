#!/usr/bin/env bash
# Retrieval quality on the shared dev evals, as one table: vecgrep in each
# ranking mode beside the BM25 window baseline (k=10, threshold 0). Then
# the semble benchmark's dev split (SB, 29 repositories, 578 plain-English
# questions): NDCG@10 per category for each mode, beside BM25 and the
# figures its authors published for other tools on the same repositories.
#
# usage: bench/eval.sh [EVAL_DIR] [BIN_DIR]
#   EVAL_DIR  where the evals are (built there by ../shared/eval if missing;
#             default: $TMPDIR/vg-evals)
#   BIN_DIR   vecgrep binaries (default: target/release, built if missing)
# env: EVALS="py-logging py-asyncio"  to run a subset;
#      MODES="hybrid semantic"        to run some modes;  BASELINE=0 to skip bm25;
#      MAX_QUERIES=N                  to run the first N queries of each eval;
#      SB=0 to skip the semble benchmark; SB_DIR=DIR where its trees are
#      unpacked (default: $TMPDIR/sb); SB_BM25=0 to skip its slow BM25 run;
#      TIERS=1 to measure the static tiers instead (below).
#
# TIERS=1: what each tier of meaning gives, on the dev evals, the
# file-level module evals (bench/modules.sh's; MODULES=0 leaves them out)
# and SB, each on its own copy of the trees (a table or --full changes the
# index):
#   minilm-static  the table distilled from MiniLM, alone (semantic mode,
#                  static index; VECGREP_STATIC_TABLE names it)
#   code-static    the shipped code table alone (semantic mode, static index)
#   first-answer   hybrid on a static index: what a new question gets
#   full           hybrid on a fully embedded index (vg-index --full)
# with each one-shot question's p50 (docstring evals). TIER_LIST picks some.
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
if [[ ${TIERS:-0} == 1 ]]; then
  exec "$repo/bench/tiers.sh" "$dest" "$bin"
fi

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

[[ ${SB:-1} == 0 ]] && exit 0
sb_src=$evals_src/sb
sb_dir=${SB_DIR:-${TMPDIR:-/tmp}/sb}
[[ -d $sb_dir/evals ]] || { mkdir -p "$sb_dir" && tar xzf "$sb_src/trees.tar.gz" -C "$sb_dir" --strip-components=1; }
trees=("$sb_dir"/evals/*/)
for d in "${trees[@]}"; do (cd "$d/tree" && vecgrep -q --index-warn-threshold 0 --index-only . >/dev/null); done
# One row: the aggregate of a scored run, SB's way (macro means over repositories).
sb_row() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[3])); c = d["category_macro"]
print(f"{sys.argv[1]:<22} {sys.argv[2]:<7} {d['overall_macro']:8.4f} {c.get('architecture', 0):8.4f} {c.get('semantic', 0):8.4f} {c.get('symbol', 0):8.4f}")
PY
}
sb_score() { python3 "$sb_src/score.py" "${trees[@]}" "$@"; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
echo
printf '%-22s %-7s %8s %8s %8s %8s\n' "SB dev (NDCG@10)" regime all arch semantic symbol
for mode in $modes; do
  sb_score --cmd "vecgrep -q --no-index --json --mode $mode -k 30 --threshold 0 {query} ." \
    --regime chunk --save-results "$work/$mode.jsonl" --json "$work/$mode-chunk.json" >/dev/null 2>&1
  sb_row "vecgrep-$mode" chunk "$work/$mode-chunk.json"
  sb_score --results "$work/$mode.jsonl" --regime dedup --raw-k 10 --json "$work/$mode-dedup.json" >/dev/null 2>&1
  sb_row "vecgrep-$mode" dedup "$work/$mode-dedup.json"
done
if [[ ${SB_BM25:-1} != 0 ]]; then
  sb_score --cmd "python3 $evals_src/bm25_baseline.py {query} . -k 30" --timeout 600 \
    --regime chunk --save-results "$work/bm25.jsonl" --json "$work/bm25-chunk.json" >/dev/null 2>&1
  sb_row bm25 chunk "$work/bm25-chunk.json"
  sb_score --results "$work/bm25.jsonl" --regime dedup --raw-k 10 --json "$work/bm25-dedup.json" >/dev/null 2>&1
  sb_row bm25 dedup "$work/bm25-dedup.json"
fi
# Published figures: overall only (the per-category ones are not published per repository).
sb_score --published "$sb_src/published.json" 2>/dev/null | awk '
  /subset=/ { split($2, v, "="); r = ($1 ~ /colgrep|ck|ripgrep/) ? "dedup" : "chunk";
              printf "%-22s %-7s %8.4f %8s %8s %8s\n", "published " $1, r, v[2], "-", "-", "-" }'
