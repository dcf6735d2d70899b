#!/usr/bin/env bash
# Rebuilds vecgrep's code model (models/vecgrep-code-minilm-l6.onnx):
# MiniLM fine-tuned on the corpus's documentation -> code pairs. Three
# steps, since the middle one wants a GPU (about 4 minutes on one H100; a
# CPU would take hours) and this project never depends on one:
#
#   train/transformer/rebuild.sh pack DIR      the pairs (train/rebuild.sh's
#       corpus), MiniLM's weights and the evals' chunks, in one folder (~45 MB);
#       HELDOUT_EVALS="DIR..." adds evals kept aside, reported but not chosen by
#   train/transformer/rebuild.sh train DIR OUT  on the GPU machine, with a
#       python that has torch, transformers, onnx, onnxruntime and tokenizers
#       (requirements.txt; TORCH_PYTHON names it, default python3)
#   train/transformer/rebuild.sh install OUT    back here: joins the parts,
#       checks the export, writes the model and its line in scripts/assets.lock
#
# See train/transformer/README.md for what each step does and MODEL_CARD.md
# for the figures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${VECGREP_TRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vecgrep/train}
model=$repo/models/vecgrep-code-minilm-l6.onnx
step() { echo "rebuild: $* ($(date +%H:%M:%S))" >&2; }
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
# shellcheck source=../pack-inputs.sh
source "$repo/train/pack-inputs.sh"

case ${1:-} in
  pack)
    [[ $# == 2 ]] || usage
    pack_inputs
    step "indexing the evals' trees (their chunks are what the model is measured on)"
    for t in "$evals"/*/tree "$sb"/evals/*/tree; do
      (cd "$t" && "$repo/target/release/vecgrep" -q --index-warn-threshold 0 --index-only . >/dev/null)
    done
    py=$("$repo/train/venv.sh")
    step "packing"
    heldout=()
    [[ -n ${HELDOUT_EVALS:-} ]] && read -ra heldout <<<"$HELDOUT_EVALS"
    "$py" "$here/prepare.py" "$2" --pairs "$cache/corpus/pairs.jsonl" --sb "$sb/evals" \
      --docstring "$evals"/py-logging "$evals"/py-asyncio "$evals"/rs-regex-automata ${heldout:+--heldout "${heldout[@]}"}
    ;;
  train)
    [[ $# == 3 ]] || usage
    step "fine-tuning and measuring each variant"
    PYTHONUNBUFFERED=1 "${TORCH_PYTHON:-python3}" "$here/finetune.py" "$2" "$3"
    ;;
  install)
    [[ $# == 2 ]] || usage
    out=$2
    if [[ -f $out/model.onnx.part0 ]]; then
      cat "$out"/model.onnx.part* > "$out/model.onnx.joined"
      mv "$out/model.onnx.joined" "$out/model.onnx"
    fi
    [[ -f $out/model.onnx ]] || { echo "rebuild: $out holds no model.onnx (did a variant beat MiniLM? see $out/report.json)" >&2; exit 2; }
    python3 - "$out/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
if r.get("export_cosine_min", 0) < 0.995:
    sys.exit(f"rebuild: the int8 export strays from the trained model (cosine {r.get('export_cosine_min')})")
print(f"rebuild: chosen {r['chosen']}, export cosine to torch >= {r['export_cosine_min']:.4f}", file=sys.stderr)
PY
    cp "$out/model.onnx" "$model"
    sha=$(sha256sum "$model" | cut -d' ' -f1)
    sed -i "s|^[0-9a-f]\{64\}  repo:models/vecgrep-code-minilm-l6.onnx  |$sha  repo:models/vecgrep-code-minilm-l6.onnx  |" \
      "$repo/scripts/assets.lock"
    cp "$out/report.json" "$here/report.json"
    step "wrote models/vecgrep-code-minilm-l6.onnx, its line in scripts/assets.lock and train/transformer/report.json"
    ;;
  *) usage ;;
esac
