#!/usr/bin/env bash
# Search cost as the index grows: query latency and memory of the one-shot
# CLI and of vg-serve at about 10k, 100k and 1M chunks, printed as one table.
#
# usage: bench/scale.sh [BIN_DIR] [COPIES...]
#   BIN_DIR  the binaries to measure (default: target/release, built if missing)
#   COPIES   how many copies of tokio 1.50.0's src/ (8,786 chunks each) make
#            each size (default: 1 11 114, about 10k, 100k and 1M chunks)
#
# The trees are copies (hard links) of tokio's src/ in a temp dir. Each is
# indexed with the static tier, then every chunk's static vector is copied
# into its model-vector column: a stand-in that makes 1M model vectors in
# a minute instead of a day, so that only size varies. Rankings over such an
# index mean nothing, so no quality figure may come from it; latency and
# memory do not depend on what the vectors say. Queries are embedded with the
# real model. Peak RSS is the process's high-water mark (VmHWM).
# Backend: the SQLite store in <root>/.vecgrep/ (the only one so far).
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
trap '[[ -n $server ]] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
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
  line=$(python3 "$repo/bench/serve-load.py" "$url" --requests 100 --clients 1)
  local hwm
  hwm=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$server/status")
  kill -TERM "$server"; wait "$server" || true
  server=""
  echo "$line" | python3 -c "
import re, sys
line = sys.stdin.read()
errors, p50, p99 = (re.search(p, line).group(1) for p in (r'(\d+) errors', r'p50 ([\d.]+)', r'p99 ([\d.]+)'))
print(errors, p50, p99, '$hwm')"
}

printf '%-9s %9s %9s | %10s %10s | %9s %9s %7s %10s\n' copies chunks "index MB" "CLI p50 ms" "CLI MB" \
  "serve p50" "serve p99" errors "serve MB"
for n in "${copies[@]}"; do
  tree="$work/tree$n"
  mkdir -p "$tree/.vecgrep"
  for i in $(seq "$n"); do cp -al "$src" "$tree/copy$i"; done
  cd "$tree"
  "$bin/vg-index" -q --index-warn-threshold 0 . > "$work/index.out"
  python3 - .vecgrep/index.db <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE chunks SET embedding = static_embedding WHERE embedding IS NULL")
db.commit()
PY
  chunks=$(python3 -c "import sqlite3; print(sqlite3.connect('.vecgrep/index.db').execute('select count(*) from chunks').fetchone()[0])")
  size=$(( $(stat -c %s .vecgrep/index.db) / 1048576 ))
  read -r cli_p50 cli_rss < <(one_shot)
  read -r errors serve_p50 serve_p99 serve_rss < <(served)
  printf '%-9s %9s %9s | %10s %10s | %9s %9s %7s %10s\n' "$n" "$chunks" "$size" "$cli_p50" "$cli_rss" \
    "$serve_p50" "$serve_p99" "$errors" "$serve_rss"
  cd "$work" && rm -rf "$tree"
done
