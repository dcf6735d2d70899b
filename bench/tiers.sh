#!/usr/bin/env bash
# The tiers of meaning side by side (bench/eval.sh TIERS=1 runs this): the
# dev docstring evals, the file-level module evals (bench/module-evals.py,
# made in EVAL_DIR; MODULES=0 leaves them out) with their pooled mrr@10,
# and SB's dev split, each tier on its own copy of the trees, since a
# static table or a full run changes the index.
#
# usage: bench/tiers.sh EVAL_DIR BIN_DIR   (env: TIER_LIST, EVALS, MODULES, SB_DIR, WORK)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
evals_src=${VG_EVAL_TOOLS:-$repo/../shared/eval}
dest=$1
bin=$(cd "$2" && pwd)
export PATH="$bin:$PATH"
tiers=${TIER_LIST:-minilm-static code-static first-answer full}
names=${EVALS:-py-logging py-asyncio rs-regex-automata}
if [[ ${MODULES:-1} == 1 ]]; then
  python3 "$repo/bench/module-evals.py" "$dest" >&2
  names+=" $(cd "$dest" && echo *-mod)"
fi
sb_src=$evals_src/sb
sb_dir=${SB_DIR:-${TMPDIR:-/tmp}/sb}
[[ -d $sb_dir/evals ]] || { mkdir -p "$sb_dir" && tar xzf "$sb_src/trees.tar.gz" -C "$sb_dir" --strip-components=1; }
work=${WORK:-${TMPDIR:-/tmp}/vg-tiers}
mkdir -p "$work"

# The table distilled from MiniLM, calibrated and packed as vecgrep loads
# tables (cached), its tokens weighted by their count as vecgrep used it
# when it distilled it at first use (log weighting costs this untrained
# table 0.014 on SB); its calibration uses the training corpus (train/rebuild.sh).
minilm_table() {
  local train=${VECGREP_TRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vecgrep/train}
  local table=$train/distilled.bin
  if [[ ! -f $table ]]; then
    [[ -f $train/corpus/pairs.jsonl ]] || { echo "tiers: run train/rebuild.sh first (the MiniLM table is calibrated on its corpus)" >&2; exit 2; }
    (cd "$repo" && cargo build --release --locked -q -p vecgrep-lib --example distil_static --example pack_static)
    [[ -f $train/distilled.f32 ]] || "$repo/target/release/examples/distil_static" "$train/distilled.f32" >&2
    "$repo/target/release/examples/pack_static" "$train/distilled.f32" "$train/corpus/pairs.jsonl" \
      "$train/corpus/teacher-tree/.vecgrep/index.db" "$table" --by-count >&2
  fi
  echo "$table"
}

# What a tier runs its commands with: the environment, the index flags, the mode.
tier_env() { [[ $1 == minilm-static ]] && echo "VECGREP_STATIC_TABLE=$(minilm_table)" || true; }
tier_index_flags() { [[ $1 == full ]] && echo "--full" || true; }
tier_mode() { case $1 in *-static) echo semantic ;; *) echo hybrid ;; esac; }

# A tier's copy of the trees under $work/TIER, indexed as the tier wants.
prepare() {
  local tier=$1 env flags
  env=$(tier_env "$tier"); flags=$(tier_index_flags "$tier")
  mkdir -p "$work/$tier"
  for name in $names; do
    [[ -d $work/$tier/$name ]] || cp -r "$dest/$name" "$work/$tier/$name"
    (cd "$work/$tier/$name/tree" && env $env vecgrep -q --index-warn-threshold 0 --index-only $flags . >/dev/null)
  done
  [[ -d $work/$tier/sb ]] || { mkdir -p "$work/$tier/sb" && cp -r "$sb_dir/evals" "$work/$tier/sb/"; }
  for d in "$work/$tier"/sb/evals/*/; do
    (cd "$d/tree" && env $env vecgrep -q --index-warn-threshold 0 --index-only $flags . >/dev/null)
  done
}

field() { python3 -c "import json,sys; d=json.loads(sys.stdin.read().strip().splitlines()[-1]); print(d.get('$1','-'))"; }
sb_row() {
  python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[2])); c = d["category_macro"]
print(f"{sys.argv[1]:<14} {'SB dev':<20} {d['overall_macro']:8.4f} {c.get('architecture', 0):8.4f} {c.get('semantic', 0):8.4f} {c.get('symbol', 0):8.4f}")
PY
}

printf '%-14s %-20s %8s %8s %8s %8s %9s\n' tier eval "mrr|all" "r@10|arch" "-|sem" "-|sym" p50_ms
for tier in $tiers; do
  prepare "$tier"
  env=$(tier_env "$tier"); mode=$(tier_mode "$tier")
  envs=(); [[ -n $env ]] && envs=(--env "$env")
  pooled=0 questions=0
  for name in $names; do
    out=$(python3 "$evals_src/run_eval.py" "$work/$tier/$name" --name "$tier" "${envs[@]}" \
      --cli "vecgrep -q --no-index --json --mode $mode -k {k} --threshold 0 {query} .")
    mrr=$(field mrr@10 <<<"$out")
    printf '%-14s %-20s %8s %8s %8s %8s %9s\n' "$tier" "$name" "$mrr" "$(field r10 <<<"$out")" - - \
      "$(field latency_p50_ms <<<"$out")"
    if [[ $name == *-mod ]]; then
      n=$(wc -l <"$work/$tier/$name/qrels.jsonl")
      pooled=$(python3 -c "print($pooled + $mrr * $n)") questions=$((questions + n))
    fi
  done
  if ((questions > 0)); then
    printf '%-14s %-20s %8.4f %8s %8s %8s %9s\n' "$tier" "modules, pooled" "$(python3 -c "print($pooled / $questions)")" - - - -
  fi
  trees=("$work/$tier"/sb/evals/*/)
  env $env python3 "$sb_src/score.py" "${trees[@]}" --cmd "vecgrep -q --no-index --json --mode $mode -k 30 --threshold 0 {query} ." \
    --regime chunk --json "$work/$tier-sb.json" >/dev/null 2>&1
  sb_row "$tier" "$work/$tier-sb.json"
done
