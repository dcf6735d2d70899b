#!/usr/bin/env bash
# What vg-serve's background fill costs and how soon an edit made during it
# is searchable, for one or more builds side by side, on cold copies of the
# tokio 1.50.0 source (bench/tokio-source.sh). Each round starts a server
# (default --refresh), waits for the fill to begin, then adds a file with a
# word found nowhere else every EDIT_EVERY seconds (default 4) until the
# fill ends, timing each until a lexical search finds it. Prints, per build
# and round: seconds until searchable, until filled, and the edits' delay
# (p50, max). Builds alternate within each round (ROUNDS, default 2).
#
# usage: bench/serve-fill.sh BIN_DIR [BIN_DIR...]   (default: target/release)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bins=("$@")
[[ ${#bins[@]} -gt 0 ]] || bins=("$repo/target/release")
rounds=${ROUNDS:-2}
edit_every=${EDIT_EVERY:-4}
src=$("$repo/bench/tokio-source.sh")
work=$(mktemp -d)
server=
cleanup() {
  [[ -n $server ]] && kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

one_round() {
  local bin=$1
  rm -rf "$work/t" && cp -r "$src" "$work/t" && mkdir "$work/t/.vecgrep"
  cd "$work/t"
  "$bin/vg-serve" -q --rate-limit 0 . > "$work/serve.out" 2> "$work/serve.err" &
  server=$!
  python3 - "$work/serve.out" "$work/t" "$edit_every" "$(basename "$(dirname "$bin")")/$(basename "$bin")" <<'EOF'
import json, statistics, sys, time, urllib.parse, urllib.request
out, tree, every, name = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
start = time.time()
while True:
    try:
        url = json.loads(open(out).readline())["listening"]
        break
    except (ValueError, KeyError):
        time.sleep(0.05)
def get(path):
    return urllib.request.urlopen(url + path).read().decode()
def status():
    return json.loads(get("/status"))
searchable = None
while True:
    s = status()
    if searchable is None and (s["filling"] or s["status"] == "ready"):
        searchable = time.time() - start
    if s["filling"] and s["vectors"] > 0 or s["status"] == "ready":
        break
    time.sleep(0.05)
delays, n = [], 0
while status()["filling"]:
    word = f"zqxedit{n}marker"
    with open(f"{tree}/edit{n}.rs", "w") as f:
        f.write(f"fn {word}() {{}}\n")
    made = time.time()
    while f'"file":"edit{n}.rs"' not in get("/search?" + urllib.parse.urlencode({"q": word, "mode": "lexical"})):
        time.sleep(0.05)
    delays.append(time.time() - made)
    n += 1
    time.sleep(max(0.0, every - delays[-1]))
while status()["status"] != "ready":
    time.sleep(0.1)
filled = time.time() - start
shown = f"p50 {statistics.median(delays):.2f} s, max {max(delays):.2f} s" if delays else "none made"
print(f"{name}: searchable after {searchable:.1f} s, filled after {filled:.1f} s; {len(delays)} edits while filling, {shown}")
EOF
  kill "$server" && wait "$server" 2>/dev/null || true
  server=
  cd "$repo"
}

for round in $(seq "$rounds"); do
  echo "round $round"
  for bin in "${bins[@]}"; do one_round "$(realpath "$bin")"; done
done
