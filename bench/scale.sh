#!/usr/bin/env bash
# Search cost as the index grows: query latency and memory of the one-shot
# CLI and of vg-serve at about 10k, 100k and 1M chunks, printed as one table.
#
# usage: bench/scale.sh [BIN_DIR] [COPIES...]
#   BIN_DIR  the binaries to measure (default: target/release, built if missing)
#   COPIES   how many copies of tokio 1.50.0's src/ (8,786 chunks each) make
#            each size (default: 1 11 114, about 10k, 100k and 1M chunks)
# env: BACKEND=sqlite (default: <root>/.vecgrep/index.db) or postgres (a
#      throwaway server from scripts/pg-server.sh, given as store_url)
#      TIER=full (default: stand-in model vectors, below) or static (the
#      index a first run leaves, static vectors only: what a new question on
#      a new large repository is ranked by; vg-serve fills it in the
#      background while it is measured, as it would)
#
# The trees are copies (hard links) of tokio's src/ in a temp dir. Each is
# indexed with the static tier, then every chunk's static vector is copied
# into its model-vector column: a stand-in that makes 1M model vectors in
# a minute instead of a day, so that only size varies. Rankings over such an
# index mean nothing, so no quality figure may come from it; latency and
# memory do not depend on what the vectors say. Queries are embedded with the
# real model. The server's latency is also given for each side of the
# ranking alone (semantic, lexical: p50 ms over 50 requests), measured once
# its words are in memory ("words s": seconds after its first searches). Peak RSS is
# the process's high-water mark (VmHWM); for
# Postgres it leaves out the server's memory, and the index size is its
# tables' and indexes' (`vg-index --stats`). Postgres builds its HNSW index
# in the index run after the vectors are put in (its time is printed, "tidy
# s"); SQLite its vectors' sign codes in the run after that ("codes s").
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$repo/target/release}
shift || true
copies=("$@")
[[ ${#copies[@]} -gt 0 ]] || copies=(1 11 114)
if [[ ! -x $bin/vecgrep ]]; then
  (cd "$repo" && cargo build --release --locked -q)
fi
bin=$(cd "$bin" && pwd)
work=$(mktemp -d)
server=""
backend=${BACKEND:-sqlite}
stop() {
  [[ -n $server ]] && kill "$server" 2>/dev/null
  [[ $backend == postgres ]] && "$repo/scripts/pg-server.sh" stop "$work/pg" > /dev/null
  rm -rf "$work"
}
trap stop EXIT
case $backend in
  sqlite) ;;
  postgres)
    chmod 711 "$work"   # the server may run as nobody (started as root), under it
    url=$("$repo/scripts/pg-server.sh" start "$work/pg")
    psql="$("$repo/scripts/pg-server.sh" bin)/psql"
    mkdir -p "$work/config/vecgrep"
    printf 'store_url = "%s"\n' "$url" > "$work/config/vecgrep/config.toml"
    export XDG_CONFIG_HOME=$work/config
    ;;
  *) echo "bench/scale.sh: BACKEND must be sqlite or postgres, not $backend" >&2; exit 2 ;;
esac
[[ ${TIER:-full} == full || $TIER == static ]] || { echo "bench/scale.sh: TIER must be full or static, not $TIER" >&2; exit 2; }

# Copy every chunk's static vector into its model-vector column, as a
# change of the index (its generation), so that the next run rebuilds what
# SQLite keeps of the vectors for one-shot searches (their sign codes).
stand_in_vectors() {
  [[ ${TIER:-full} == static ]] && return
  local sql="UPDATE chunks SET embedding = static_embedding WHERE embedding IS NULL;
    UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) WHERE key = 'generation';"
  if [[ $backend == sqlite ]]; then
    python3 -c "import sqlite3, sys; db = sqlite3.connect('.vecgrep/index.db'); db.executescript(sys.argv[1])" "$sql"
  else
    local schema
    schema=$("$psql" -qAtX "$url" -c "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'vg\_%'")
    "$psql" -qAtX -v ON_ERROR_STOP=1 "$url" -c "SET search_path TO $schema, public; $sql" > /dev/null
  fi
}
src=$("$repo/bench/tokio-source.sh")/src
queries=("spawn a task on the runtime" "read from a tcp socket" "timeout for an async operation"
  "shut down the runtime gracefully" "wake a task when data is ready" "bounded channel send"
  "mutex lock guard" "schedule work on a thread pool" "parse a duration" "handle a closed connection")

# Median wall time of one-shot searches, one per query, and the largest peak RSS.
one_shot() {
  python3 - "$bin/vecgrep" "${queries[@]}" <<'PY'
import resource, statistics, subprocess, sys, time
vecgrep, queries = sys.argv[1], sys.argv[2:]
times = []
for q in queries:
    t = time.perf_counter()
    subprocess.run([vecgrep, "-q", "--no-index", "--json", q, "."], stdout=subprocess.DEVNULL, check=False)
    times.append((time.perf_counter() - t) * 1000)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print(f"{statistics.median(times):.0f} {rss}")
PY
}

# p50 and p99 of vg-serve /search (k=10, one client) and its peak RSS.
served() {
  "$bin/vg-serve" -q --rate-limit 0 . > "$work/serve.out" 2> "$work/serve.err" &
  server=$!
  for _ in $(seq 3000); do [[ -s $work/serve.out ]] && break; sleep 0.1; done
  [[ -s $work/serve.out ]] || { cat "$work/serve.err" >&2; exit 1; }
  local url line
  url=$(head -1 "$work/serve.out" | python3 -c "import json,sys; print(json.load(sys.stdin)['listening'])")
  python3 "$repo/bench/serve-load.py" "$url" --requests 10 --clients 1 > /dev/null   # warm-up
  # The first search starts reading the words into memory; the index
  # answers for them until then. Seconds until they are in memory:
  local words
  words=$(python3 - "$url" <<'PY'
import json, sys, time, urllib.request
start = time.perf_counter()
while time.perf_counter() - start < 3600:
    if json.load(urllib.request.urlopen(sys.argv[1] + "/status"))["words_in_memory"]:
        break
    time.sleep(0.2)
print(f"{time.perf_counter() - start:.0f}")
PY
)
  line=$(python3 "$repo/bench/serve-load.py" "$url" --requests 100 --clients 1)
  # Where the time goes: each side of the ranking alone.
  local semantic lexical
  semantic=$(python3 "$repo/bench/serve-load.py" "$url" --requests 50 --clients 1 --mode semantic | grep -o 'p50 [0-9.]*' | cut -d' ' -f2)
  lexical=$(python3 "$repo/bench/serve-load.py" "$url" --requests 50 --clients 1 --mode lexical | grep -o 'p50 [0-9.]*' | cut -d' ' -f2)
  local hwm
  hwm=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$server/status")
  kill -TERM "$server"; wait "$server" || true
  server=""
  echo "$line" | python3 -c "
import re, sys
line = sys.stdin.read()
errors, p50, p99 = (re.search(p, line).group(1) for p in (r'(\d+) errors', r'p50 ([\d.]+)', r'p99 ([\d.]+)'))
print(errors, p50, p99, '$hwm', '$semantic', '$lexical', '$words')"
}

echo "backend: $backend, tier: ${TIER:-full}"
printf '%-9s %9s %9s %8s %8s | %10s %10s | %9s %9s %7s %10s | %9s %9s %8s\n' copies chunks "index MB" "tidy s" "codes s" \
  "CLI p50 ms" "CLI MB" "serve p50" "serve p99" errors "serve MB" "semantic" "lexical" "words s"
for n in "${copies[@]}"; do
  tree="$work/tree$n"
  mkdir -p "$tree/.vecgrep"
  for i in $(seq "$n"); do cp -al "$src" "$tree/copy$i"; done
  cd "$tree"
  "$bin/vg-index" -q --index-warn-threshold 0 . > "$work/index.out"
  stand_in_vectors
  # One more file, so that the next run tidies the index as a run that
  # changed it does (and Postgres, past its threshold, builds HNSW); then
  # its chunk gets a vector too, or every search would look for chunks to
  # embed among the static vectors as well.
  echo "// bench" > bench_touch.rs
  start=$(date +%s)
  "$bin/vg-index" -q --index-warn-threshold 0 . > "$work/index.out"
  tidied=$(( $(date +%s) - start ))
  stand_in_vectors
  start=$(date +%s)
  "$bin/vg-index" -q --index-warn-threshold 0 . > "$work/index.out"
  coded=$(( $(date +%s) - start ))
  read -r chunks size < <("$bin/vg-index" --stats --json . | python3 -c "
import json, sys
s = json.load(sys.stdin)
print(s['chunks'], s['db_size_bytes'] // 1048576)")
  read -r cli_p50 cli_rss < <(one_shot)
  read -r errors serve_p50 serve_p99 serve_rss serve_semantic serve_lexical words_s < <(served)
  printf '%-9s %9s %9s %8s %8s | %10s %10s | %9s %9s %7s %10s | %9s %9s %8s\n' "$n" "$chunks" "$size" "$tidied" "$coded" "$cli_p50" \
    "$cli_rss" "$serve_p50" "$serve_p99" "$errors" "$serve_rss" "$serve_semantic" "$serve_lexical" "$words_s"
  "$bin/vg-index" -q --clear-cache . > /dev/null
  cd "$work" && rm -rf "$tree"
done
