#!/usr/bin/env bash
# How fast vecgrep answers a user who is done while the background fill
# embeds, on the tokio 1.50.0 source (bench/tokio-source.sh) with BUSY
# (default 2) other processes keeping the cores busy: vg-serve's exit after
# SIGTERM, and the picker's Enter to the chosen result opening (its
# open_cmd run). Three tries each; each starts on a cold copy of the tree,
# so the fill has all of it to embed. Needs tmux for the picker.
#
# usage: bench/quit-while-filling.sh [BIN_DIR]   (default: target/release)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath -m "${1:-$repo/target/release}")
busy=${BUSY:-2}
src=$("$repo/bench/tokio-source.sh")
work=$(mktemp -d)
socket="vg-bench-quit-$$"
burners=()
cleanup() {
  for b in "${burners[@]}"; do kill "$b" 2>/dev/null || true; done
  tmux -L "$socket" kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq "$busy"); do (while :; do :; done) & burners+=($!); done
now() { date +%s.%N; }
ms() { python3 -c "print(round(($2 - $1) * 1000))"; }

fresh_tree() {
  rm -rf "$work/t" && cp -r "$src" "$work/t" && mkdir "$work/t/.vecgrep"
}

serve_once() {
  fresh_tree
  cd "$work/t"
  "$bin/vg-serve" -q --rate-limit 0 . > "$work/serve.out" 2> "$work/serve.err" &
  local server=$!
  local url=
  for _ in $(seq 600); do
    url=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["listening"])' "$work/serve.out" 2>/dev/null) && break
    sleep 0.1
  done
  for _ in $(seq 600); do
    python3 -c 'import json,sys,urllib.request; s=json.load(urllib.request.urlopen(sys.argv[1]+"/status")); sys.exit(0 if s.get("filling") or s.get("status") == "filling" else 1)' "$url" && break
    sleep 0.1
  done
  sleep 2 # well into a batch
  local sent
  sent=$(now)
  kill -TERM "$server"
  wait "$server" || true
  echo "vg-serve exit after SIGTERM: $(ms "$sent" "$(now)") ms"
}

pick_once() {
  fresh_tree
  cd "$work/t"
  rm -f "$work/opened"
  tmux -L "$socket" -f /dev/null new-session -d -x 150 -y 30 \
    "env -u VISUAL -u EDITOR '$bin/vg-pick' --open-cmd 'date +%s.%N > $work/opened' ."
  local screen=
  for _ in $(seq 1200); do
    screen=$(tmux -L "$socket" capture-pane -p)
    [[ $screen == *"filling "* ]] && break
    sleep 0.1
  done
  [[ $screen == *"filling "* ]] || { echo "the picker never showed its fill: $screen" >&2; exit 2; }
  tmux -L "$socket" send-keys -l "spawn a task on the runtime"
  for _ in $(seq 600); do
    screen=$(tmux -L "$socket" capture-pane -p)
    [[ $screen == *"> "*":"* && $screen == *"filling "* ]] && break
    sleep 0.1
  done
  local pressed
  pressed=$(now)
  tmux -L "$socket" send-keys Enter
  for _ in $(seq 600); do [[ -s $work/opened ]] && break; sleep 0.02; done
  [[ -s $work/opened ]] || { echo "the picker never opened the result" >&2; exit 2; }
  echo "vg-pick Enter to open_cmd: $(ms "$pressed" "$(cat "$work/opened")") ms"
  tmux -L "$socket" kill-server 2>/dev/null || true
}

echo "tokio 1.50.0, $busy busy processes beside, $(nproc) cores"
for _ in 1 2 3; do serve_once; done
for _ in 1 2 3; do pick_once; done
