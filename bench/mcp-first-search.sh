#!/usr/bin/env bash
# How soon vg-mcp answers an agent's first search on a cold tree (no index
# yet): the tokio 1.50.0 source, as bench/perf.sh uses it. An MCP client
# (the official Python SDK, tests/mcp/client.py) starts vg-mcp, shakes
# hands and searches at once; printed are the seconds from spawning the
# server to the handshake and to the search's answer, how many results it
# had and how far indexing was. The target is an answer within 2 s.
#
# usage: bench/mcp-first-search.sh [BIN_DIR] [RUNS]   (default: target/release, 3 runs)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath -m "${1:-$repo/target/release}")
runs=${2:-3}
if [[ ! -x $bin/vg-mcp ]]; then
  (cd "$repo" && cargo build --release --locked -q)
fi
python=$("$repo/scripts/mcp-client-venv.sh")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

src=$("$repo/bench/tokio-source.sh")
echo "tokio 1.50.0: $(find "$src" -type f -name '*.rs' | wc -l) .rs files; vg-mcp from $bin"
printf '%-4s %10s %14s %8s %s\n' run handshake "first search" results "indexing at the answer"
for run in $(seq 1 "$runs"); do
  rm -rf "$work/tokio"
  cp -r "$src" "$work/tokio"
  mkdir "$work/tokio/.vecgrep"   # its own project root, with no index
  python3 - "$work/tokio" "$bin/vg-mcp" > "$work/plan.json" <<'PY'
import json, sys
tree, server = sys.argv[1], sys.argv[2]
print(json.dumps({"command": [server, "-q"], "cwd": tree, "mode": "handshake", "steps": [
    {"op": "call", "tool": "search", "args": {"query": "spawn a task onto the runtime", "k": 5}}]}))
PY
  "$python" "$repo/tests/mcp/client.py" "$work/plan.json" > "$work/out"
  python3 - "$run" "$work/out" <<'PY'
import json, sys
run, path = sys.argv[1], sys.argv[2]
records = [json.loads(line) for line in open(path)]
connect, search = records[0], records[1]
content = search["result"]["structuredContent"]
index = content["index"]
state = f'{index["status"]}: {index["files"]} files searchable, {index["indexed"]} of {index["total"]} processed'
print(f'{run:<4} {connect["seconds"]:>8.2f} s {search["seconds"]:>12.2f} s {len(content["results"]):>8} {state}')
PY
done
