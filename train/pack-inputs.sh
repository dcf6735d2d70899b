# Sourced by train/transformer/rebuild.sh and train/reranker/rebuild.sh: what
# both pack steps start from. pack_inputs mines the corpus if the cache lacks
# its pairs, fetches the model assets, builds the release binaries, and
# unpacks the dev evals and SB's trees; it sets $evals (the dev evals'
# folder) and $sb (SB's, with evals/ below it). Needs $repo and $cache.
pack_inputs() {
  if [[ ! -f $cache/corpus/pairs.jsonl ]]; then
    step "mining the corpus (train/rebuild.sh's first steps)"
    python3 "$repo/train/corpus/fetch.py"
    python3 "$repo/train/corpus/mine.py" --out "$cache/corpus"
  fi
  "$repo/scripts/fetch-assets.sh"
  (cd "$repo" && cargo build --release --locked -q -p vecgrep-bins)
  evals=${TMPDIR:-/tmp}/vg-evals
  [[ -d $evals/py-logging ]] || "$repo/../shared/eval/make_dev_evals.sh" "$evals" >&2
  sb=${SB_DIR:-${TMPDIR:-/tmp}/sb}
  [[ -d $sb/evals ]] || { mkdir -p "$sb" && tar xzf "$repo/../shared/eval/sb/trees.tar.gz" -C "$sb" --strip-components=1; }
}
