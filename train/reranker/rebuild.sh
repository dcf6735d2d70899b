#!/usr/bin/env bash
# Trains and measures a cross-encoder reranker for vecgrep's first results.
# Three steps, since the middle one wants a GPU (a few minutes on one H100 or
# H200; two CPU cores would take days) and this project never depends on one:
#
#   train/reranker/rebuild.sh pack DIR      MiniLM's weights, the corpus's
#       pairs (train/rebuild.sh's first steps) and each eval question's first
#       30 results by vecgrep, in one folder (under 64 MiB); FULL=1 ranks them
#       on fully embedded indexes (an hour of embedding) instead of static
#       ones; HELDOUT_EVALS="DIR..." adds evals kept aside, reported only
#   train/reranker/rebuild.sh train DIR OUT [ARGS]  on the GPU machine (ARGS
#       go to rerank.py: --variants L6-256, --budget 400), with a python
#       that has torch, transformers, onnx, onnxruntime and tokenizers
#       (../transformer/requirements.txt; TORCH_PYTHON names it)
#   train/reranker/rebuild.sh smoke DIR OUT  the train step in miniature on
#       this machine's CPU (TORCH_PYTHON as above): checks the script
#   train/reranker/rebuild.sh train DIR OUT --cpu --variants L2-128 --pairs 20000
#       --budget 6000  the small variant on two CPU cores, about 80 minutes
#
# What each step does and what it found: README.md beside this script.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${VECGREP_TRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vecgrep/train}
step() { echo "rebuild: $* ($(date +%H:%M:%S))" >&2; }
usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
# shellcheck source=../pack-inputs.sh
source "$repo/train/pack-inputs.sh"

case ${1:-} in
  pack)
    [[ $# == 2 ]] || usage
    pack_inputs
    heldout=()
    [[ -n ${HELDOUT_EVALS:-} ]] && read -ra heldout <<<"$HELDOUT_EVALS"
    full=()
    [[ ${FULL:-0} == 1 ]] && full=(--full)
    step "indexing the evals' trees${full:+ (fully embedded)}"
    for t in "$evals"/{py-logging,py-asyncio,rs-regex-automata}/tree "$sb"/evals/*/tree "${heldout[@]/%//tree}"; do
      (cd "$t" && "$repo/target/release/vecgrep" -q --index-warn-threshold 0 --index-only "${full[@]}" . >/dev/null)
    done
    py=$("$repo/train/venv.sh")
    step "packing (each question asked of vecgrep)"
    "$py" "$here/pack.py" "$2" --vecgrep "$repo/target/release/vecgrep" --sb "$sb/evals" \
      --docstring "$evals"/py-logging "$evals"/py-asyncio "$evals"/rs-regex-automata ${heldout:+--heldout "${heldout[@]}"}
    du -sh "$2" >&2
    ;;
  train | smoke)
    [[ $# -ge 3 ]] || usage
    smoke=()
    [[ $1 == smoke ]] && smoke=(--smoke)
    step "training and measuring each variant"
    PYTHONUNBUFFERED=1 "${TORCH_PYTHON:-python3}" "$here/rerank.py" "$2" "$3" "${smoke[@]}" "${@:4}"
    ;;
  *) usage ;;
esac
