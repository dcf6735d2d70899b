#!/usr/bin/env bash
# Questions about what a file or package is for, on code nobody here wrote:
# the file-level evals bench/module-evals.py makes from module docs (Rust
# `//!`, Go package comments, Python module docstrings), mrr@10 of the
# answer file in each ranking mode, one row per eval and a pooled row (the
# mean over the module evals' questions). The docstring evals
# (bench/eval.sh) ask for one function; these ask what SB's architecture
# questions ask, so a ranking choice is checked on both kinds. A prose eval
# (prose-*-docs: documentation pages asked for beside the code) has its
# row and stays out of the pool: the code a page describes answers it too.
#
# usage: bench/modules.sh [DEST] [BIN_DIR]
#   DEST     where the evals are made (default: $TMPDIR/vg-module-evals)
#   BIN_DIR  vecgrep binaries (default: target/release, built if missing)
# env: MODES="hybrid semantic lexical"; FULL=1 to index with the model's
#      vectors (vg-index --full, minutes on 2 cores) instead of the static
#      tier a new question is answered from; FLAGS="..." go to every index
#      and search (e.g. FLAGS="--embedder-model vecgrep-code-minilm-l6"
#      with FULL=1); PACKAGES=bench/modules/check-packages.tsv makes and runs
#      the six check evals instead (packages the usual eight are not). An
#      index is kept between runs: use another DEST per tier, model or list.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
run_eval=${VG_EVAL_TOOLS:-$repo/../shared/eval}/run_eval.py
dest=${1:-${TMPDIR:-/tmp}/vg-module-evals}
bin=${2:-$repo/target/release}
modes=${MODES:-hybrid semantic lexical}
read -ra flags <<<"${FLAGS:-}"
index=(--index-only "${flags[@]}")
[[ ${FULL:-0} == 1 ]] && index+=(--full)

[[ -x $bin/vecgrep ]] || (cd "$repo" && cargo build --release --locked -q)
python3 "$repo/bench/module-evals.py" "$dest" ${PACKAGES:+--packages "$PACKAGES"} >&2
export PATH="$bin:$PATH"
evals=("$dest"/*/)
for d in "${evals[@]}"; do (cd "$d/tree" && vecgrep -q --index-warn-threshold 0 "${index[@]}" . >/dev/null); done

field() { python3 -c "import json,sys; d=json.loads(sys.stdin.read().strip().splitlines()[-1]); print(d.get('$1','-'))"; }
printf '%-18s %9s' eval questions
for mode in $modes; do printf ' %9s' "$mode"; done
echo
declare -A sum
total=0
for d in "${evals[@]}"; do
  name=$(basename "$d")
  n=$(wc -l <"$d/qrels.jsonl")
  row=$(printf '%-18s %9s' "$name" "$n")
  pooled=0
  [[ $name == *-mod ]] && pooled=1 && total=$((total + n))
  for mode in $modes; do
    mrr=$(python3 "$run_eval" "$d" --name "vecgrep-$mode" \
      --cli "vecgrep -q --no-index --json --mode $mode ${FLAGS:-} -k {k} --threshold 0 {query} ." | field mrr@10)
    sum[$mode]=$(python3 -c "print(${sum[$mode]:-0} + $mrr * $n * $pooled)")
    row+=$(printf ' %9.3f' "$mrr")
  done
  echo "$row"
done
printf '%-18s %9s' "modules, pooled" "$total"
for mode in $modes; do printf ' %9.3f' "$(python3 -c "print(${sum[$mode]} / $total)")"; done
echo
