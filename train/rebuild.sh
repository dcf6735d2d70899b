#!/usr/bin/env bash
# One command from an empty cache to the shipped static code table
# (models/static-code.bin and its hash): fetch the corpus's packages, mine
# them, let MiniLM embed a sample of their code as vecgrep chunks it (the
# teacher), distil the starting table, train, pack. Everything fetched or
# computed is cached under ${VECGREP_TRAIN_CACHE:-~/.cache/vecgrep/train};
# a second run redoes only what changed. See train/README.md.
#
# usage: train/rebuild.sh [--no-install] [--sb-trees PATH]   (--no-install:
#        leave models/ alone, write the packed table to the cache only;
#        --sb-trees: the benchmark's trees.tar.gz, whose files the corpus
#        keeps out, where ../shared/eval/sb/ does not hold it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cache=${VECGREP_TRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vecgrep/train}
install=1
# Anything else is refused: a typo started the 25-minute rebuild, which
# then overwrote models/ (audit 217).
mine_args=()
while (( $# )); do
  case $1 in
    --no-install) install=0; shift ;;
    --sb-trees)
      [[ $# -ge 2 && -n $2 && $2 != -* ]] || { echo "rebuild: --sb-trees needs the benchmark's trees.tar.gz" >&2; exit 2; }
      [[ -f $2 ]] || { echo "rebuild: --sb-trees: no file $2" >&2; exit 2; }
      mine_args=(--sb-trees "$2"); shift 2 ;;
    -h|--help) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "rebuild: unknown argument '$1'; usage: train/rebuild.sh [--no-install] [--sb-trees PATH]" >&2; exit 2 ;;
  esac
done
step() { echo "rebuild: $* ($(date +%H:%M:%S))" >&2; }

step "python environment"
py=$("$here/venv.sh")
step "assets and binaries"
"$repo/scripts/fetch-assets.sh"
(cd "$repo" && cargo build --release --locked -q -p vecgrep-bins && \
  cargo build --release --locked -q -p vecgrep-lib --example distil_static --example pack_static)
bin=$repo/target/release

step "fetching the corpus's packages"
python3 "$here/corpus/fetch.py"
step "mining pairs and the teacher's sample"
python3 "$here/corpus/mine.py" --out "$cache/corpus" "${mine_args[@]}"

tree=$cache/corpus/teacher-tree
stamp=$cache/teacher.stamp
want=$(python3 -c "import hashlib, json, sys
files = json.load(open(sys.argv[1]))['teacher_files']
print(hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:16])" "$here/manifest.json")
if [[ ! -f $stamp || $(cat "$stamp") != "$want" || ! -f $tree/.vecgrep/index.db ]]; then
  step "the teacher (MiniLM) embeds the sample as vecgrep chunks it"
  mkdir -p "$tree/.vecgrep"
  (cd "$tree" && "$bin/vecgrep" --index-only --full --index-warn-threshold 0 .)
  echo "$want" > "$stamp"
fi

base=$cache/distilled.f32
if [[ ! -f $base ]]; then
  step "distilling the starting table from MiniLM"
  "$repo/target/release/examples/distil_static" "$base"
fi

step "training"
"$py" "$here/model/train.py" --teacher "$tree" --pairs "$cache/corpus/pairs.jsonl" --base "$base" \
  --out "$cache/trained.f32"
step "calibrating and packing"
"$repo/target/release/examples/pack_static" "$cache/trained.f32" "$cache/corpus/pairs.jsonl" \
  "$tree/.vecgrep/index.db" "$cache/static-code.bin"
if [[ $install == 1 ]]; then
  mkdir -p "$repo/models"
  cp "$cache/static-code.bin" "$repo/models/static-code.bin"
  cp "$cache/static-code.bin.blake3" "$repo/models/static-code.blake3"
  sha=$(sha256sum "$repo/models/static-code.bin" | cut -d' ' -f1)
  sed -i "s|^[0-9a-f]\{64\}  repo:models/static-code.bin  |$sha  repo:models/static-code.bin  |" "$repo/scripts/assets.lock"
  step "wrote models/static-code.bin, models/static-code.blake3 and its line in scripts/assets.lock"
fi
