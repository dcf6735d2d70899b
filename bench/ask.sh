#!/usr/bin/env bash
# /v1/ask's latency on a tree you name: vg-serve indexes it fully first
# (--full-index), with the small local chat model (scripts/llm-server.sh)
# as its llm_url; bench/ask.py then asks questions the hits answer and
# questions that ask to be explained (the chat model answers those).
#
# usage: bench/ask.sh TREE [BIN_DIR] [ROUNDS]   (default: target/release, 3 rounds)
# The tree is copied; its index is made in the copy. ask.py's questions are
# about a Python web framework (flask).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tree=$(realpath "${1:?usage: bench/ask.sh TREE [BIN_DIR] [ROUNDS]}")
bin=$(realpath -m "${2:-$repo/target/release}")
rounds=${3:-3}
[[ -x $bin/vg-serve ]] || (cd "$repo" && cargo build --release --locked -q)
work=$(mktemp -d)
cleanup() {
  [[ -n ${server:-} ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  "$repo/scripts/llm-server.sh" stop "$work" || true
  rm -rf "$work"
}
trap cleanup EXIT
llm=$("$repo/scripts/llm-server.sh" start "$work")
mkdir -p "$work/config/vecgrep"
printf 'llm_url = "%s"\nllm_timeout = 300\n' "$llm" > "$work/config/vecgrep/config.toml"
cp -r "$tree" "$work/tree"
rm -rf "$work/tree/.vecgrep" && mkdir "$work/tree/.vecgrep"
cd "$work/tree"
XDG_CONFIG_HOME="$work/config" "$bin/vg-serve" -q --full-index --rate-limit 0 > "$work/listening" &
server=$!
until grep -q listening "$work/listening" 2>/dev/null; do
  kill -0 "$server" || { echo "ask.sh: vg-serve stopped" >&2; exit 2; }
  sleep 0.5
done
url=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["listening"])' "$work/listening")
echo "$(find . -type f -not -path './.vecgrep/*' | wc -l) files, fully indexed; vg-serve from $bin; chat model: SmolLM2-135M (1 thread)"
python3 "$repo/bench/ask.py" "$url" --rounds "$rounds"
