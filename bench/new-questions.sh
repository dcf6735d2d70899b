#!/usr/bin/env bash
# New questions on a cold tree, the tokio 1.50.0 source (bench/tokio-source.sh):
# the first answer of a one-shot vecgrep, then ten new questions one-shot
# (p50), then ten new questions to vg-serve while its background fill runs.
#
# usage: bench/new-questions.sh [BIN_DIR]   (default: target/release)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath -m "${1:-$repo/target/release}")
src=$("$repo/bench/tokio-source.sh")
work=$(mktemp -d); trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
server=
cp -r "$src" "$work/t"; cd "$work/t"; mkdir .vecgrep
s=$(date +%s.%N); "$bin/vecgrep" -q --index-warn-threshold 0 "spawn a task on the runtime" . > /dev/null; e=$(date +%s.%N)
echo "cold first answer: $(echo "$e - $s" | bc) s"
questions=("shut down the runtime gracefully" "a timer that fires after a delay" "send a value over a channel to another task"
  "limit how many tasks run at once" "handle unix signals" "run blocking work on a thread pool" "wake a task when io is ready"
  "measure elapsed time" "cancel a task when it is dropped" "split a socket into reader and writer halves")
python3 - "$bin/vecgrep" "${questions[@]}" <<'PY'
import statistics, subprocess, sys, time
times = []
for q in sys.argv[2:]:
    t = time.perf_counter(); subprocess.run([sys.argv[1], "-q", q, "."], stdout=subprocess.DEVNULL, check=False)
    times.append((time.perf_counter() - t) * 1000)
print(f"ten new questions, one-shot vecgrep: p50 {statistics.median(times):.0f} ms, max {max(times):.0f} ms")
PY
cd "$work" && cp -r "$src" "$work/s" && cd "$work/s" && mkdir .vecgrep
"$bin/vg-serve" -q --rate-limit 0 . > "$work/serve.out" 2> "$work/serve.err" &
server=$!
timeout 300 python3 - "$work/serve.out" "${questions[@]}" <<'PY'
import json, statistics, sys, time, urllib.parse, urllib.request
start = time.time()
while True:
    try:
        url = json.loads(open(sys.argv[1]).readline())["listening"]; break
    except (ValueError, KeyError, FileNotFoundError):
        time.sleep(0.05)
asked, times, searchable = list(sys.argv[2:]), [], None
while asked and time.time() - start < 280:
    s = json.load(urllib.request.urlopen(url + "/status"))
    filling = s.get("filling") or s["status"] == "filling"
    if filling and searchable is None:
        searchable = time.time() - start
    if filling:
        t = time.perf_counter()
        urllib.request.urlopen(url + "/search?" + urllib.parse.urlencode({"q": asked.pop(0), "k": 10})).read()
        times.append((time.perf_counter() - t) * 1000)
    time.sleep(0.3)
print(f"vg-serve: searchable after {searchable} s; {len(times)} new questions while filling: p50 {statistics.median(times):.0f} ms, max {max(times):.0f} ms")
PY
