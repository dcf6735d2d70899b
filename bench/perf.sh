#!/usr/bin/env bash
# Indexing and query performance on the tokio 1.50.0 source, printed as one
# table. tokio is fetched by a throwaway manifest and `cargo fetch`, then
# copied to a temp dir so the registry copy is never touched.
#
# usage: bench/perf.sh [BIN_DIR]   (default: target/release, built if missing)
# The vg-serve rows use bench/serve-load.py (its p50 is the median per request).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$repo/target/release}
if [[ ! -x $bin/vg-index ]]; then
  (cd "$repo" && cargo build --release --locked -q)
fi
# The picker's search path is measured by an example of this checkout, so
# only when BIN_DIR is this checkout's build: built from other code it would
# read (and, if their formats differ, rebuild) the index those binaries made.
picker=0
if [[ $(cd "$bin" && pwd) == "$repo/target/release" ]]; then
  picker=1
  (cd "$repo" && cargo build --release --locked -q --example pick_latency)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

src=$("$repo/bench/tokio-source.sh")
cp -r "$src" "$work/tokio"
cd "$work/tokio"
mkdir .vecgrep   # mark the copy as its own project root

timed() { # label, command...: prints wall, cpu, peak RSS; leaves stdout in $work/out
  local label=$1; shift
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" > "$work/out" 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
  read -r wall user sys rss < "$work/time"
  printf '%-34s %8.2f s wall %8.2f s cpu %8.0f MB peak RSS\n' "$label" "$wall" "$(echo "$user + $sys" | bc)" "$((rss / 1024))"
}
summary_field() { grep '"type":"summary"' "$work/out" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
median_ms() { python3 "$repo/bench/median-ms.py" "$@"; } # runs, command...

echo "tokio 1.50.0: $(find . -type f -name '*.rs' | wc -l) .rs files, $(du -sh --exclude=.vecgrep . | cut -f1)"
# Fully embedded first (--full: the model on every chunk), for the rows
# that compare with earlier versions and for the server.
timed "cold index, --full" "$bin/vg-index" -q --full --index-warn-threshold 0 .
echo "  chunks: $(summary_field chunks), tokens embedded: $(summary_field tokens), files: $(summary_field files), index: $(du -h .vecgrep/index.db | cut -f1)"
timed "re-index, nothing changed" "$bin/vg-index" -q .
echo "// touched by the benchmark" >> src/lib.rs
timed "re-index, one file changed, --full" "$bin/vg-index" -q --full .
echo "  a line appended to src/lib.rs: $(summary_field embedded) chunks embedded, $(summary_field copied) copied"
# An edit in the middle of a large file shifts the chunks after it.
mid=$(( $(wc -l < src/runtime/builder.rs) / 2 ))
sed -i "${mid}a\\    // inserted by the benchmark" src/runtime/builder.rs
timed "re-index, a line inserted mid-file, --full" "$bin/vg-index" -q --full .
echo "  src/runtime/builder.rs: $(summary_field embedded) chunks embedded, $(summary_field copied) copied"
echo "one-shot vecgrep QUERY, median of 10: $(median_ms 10 "$bin/vecgrep" -q "spawn a task on the runtime" .) ms"
echo "vg-query, median of 10:              $(median_ms 10 "$bin/vg-query" -q "spawn a task on the runtime" .) ms"
# vg-pick's search path (after its 120 ms debounce), 20 queries.
if [[ $picker == 1 ]]; then
  "$repo/target/release/examples/pick_latency" .
else
  echo "picker search path: not measured (BIN_DIR is not this checkout's build)"
fi

# The server: warm model and index; the index is already up to date.
"$bin/vg-serve" -q --full-index --rate-limit 0 . > "$work/serve.out" 2> "$work/serve.err" &
server=$!
for _ in $(seq 100); do [[ -s $work/serve.out ]] && break; sleep 0.1; done
url=$(head -1 "$work/serve.out" | python3 -c "import json,sys; print(json.load(sys.stdin)['listening'])")
python3 "$repo/bench/serve-load.py" "$url" --requests 20 --clients 1 > /dev/null   # warm-up
echo "vg-serve /search k=10, 1 client:    $(python3 "$repo/bench/serve-load.py" "$url" --requests 200 --clients 1)"
echo "vg-serve /search k=10, 8 clients:   $(python3 "$repo/bench/serve-load.py" "$url" --requests 2000 --clients 8)"
kill -TERM "$server"; wait "$server"

# Default settings (the static tier) on a fresh copy: the first answer of
# a cold tree (index run and search in one command), then new questions,
# each asked once (what a user's next question costs).
rm -rf "$work/tokio"
cp -r "$src" "$work/static"
cd "$work/static"
mkdir .vecgrep
timed "cold first answer" "$bin/vecgrep" -q --index-warn-threshold 0 "spawn a task on the runtime" .
echo "  $("$bin/vg-index" --stats | grep vectors)"
timed "a new query" "$bin/vecgrep" -q "read bytes from a tcp stream" .
timed "the same query again" "$bin/vecgrep" -q "read bytes from a tcp stream" .
echo "  $("$bin/vg-index" --stats | grep vectors)"
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

# vg-serve on a cold copy: searchable when its index run ends, filled with
# the model's vectors in the background after.
cd "$work" && rm -rf "$work/static" && cp -r "$src" "$work/served" && cd "$work/served" && mkdir .vecgrep
"$bin/vg-serve" -q --rate-limit 0 . > "$work/serve.out" 2> "$work/serve.err" &
server=$!
python3 - "$work/serve.out" "${questions[@]}" <<'PY'
import json, statistics, sys, time, urllib.parse, urllib.request
start = time.time()
while True:
    try:
        url = json.loads(open(sys.argv[1]).readline())["listening"]
        break
    except (ValueError, KeyError):
        time.sleep(0.05)
searchable, asked, while_filling = None, list(sys.argv[2:]), []
while True:
    s = json.load(urllib.request.urlopen(url + "/status"))
    # Searchable once the index run is over: filling in the background, or ready.
    if (s.get("filling") or s["status"] == "ready") and searchable is None:
        searchable = time.time() - start
    if s.get("filling") and asked:
        t = time.perf_counter()
        urllib.request.urlopen(url + "/search?" + urllib.parse.urlencode({"q": asked.pop(0), "k": 10})).read()
        while_filling.append((time.perf_counter() - t) * 1000)
    if s["status"] == "ready":
        break
    time.sleep(0.2)
print(f"vg-serve cold: searchable after {searchable:.1f} s, filled after {time.time() - start:.1f} s "
      f"({s['vectors']} of {s['chunks']} chunks with the model's vectors)")
if while_filling:
    print(f"  new questions while filling: {len(while_filling)}, p50 {statistics.median(while_filling):.0f} ms, "
          f"max {max(while_filling):.0f} ms")
PY
kill -TERM "$server"; wait "$server"

# A generated tree of over 10,000 files (copies of tokio's), cold, default settings.
cd "$work" && rm -rf "$work/served" && mkdir -p big/.vecgrep
for i in $(seq -w 0 18); do mkdir "big/copy$i" && cp -r "$src/." "big/copy$i/"; done
cd big
echo "generated tree: $(find . -type f -not -path './.vecgrep/*' | wc -l) files, $(du -sh --exclude=.vecgrep . | cut -f1)"
timed "10k files: cold first answer" "$bin/vecgrep" -q --index-warn-threshold 0 "spawn a task on the runtime" .
echo "  $("$bin/vg-index" --stats | grep vectors)"
timed "10k files: a new query" "$bin/vecgrep" -q "read bytes from a tcp stream" .
timed "10k files: the same query again" "$bin/vecgrep" -q "read bytes from a tcp stream" .
