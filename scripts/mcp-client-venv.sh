#!/usr/bin/env bash
# Make (once) the Python environment with the official MCP SDK that the
# tests drive vg-mcp with, from scripts/mcp-client.lock (pinned by hash),
# and print its python. pip caches the wheels, so a second machine setup is
# quick and a second run does nothing.
#
# usage: scripts/mcp-client-venv.sh      prints the venv's python on stdout
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lock="$here/mcp-client.lock"
venv="${VECGREP_MCP_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/vecgrep/mcp-client-venv}"
stamp="$venv/.vecgrep-lock-sha256"
want=$(sha256sum "$lock" | cut -d' ' -f1)
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "$venv/bin/python"
  exit 0
fi
python=$(command -v python3 || true)
if [[ -z "$python" ]]; then
  echo "mcp-client-venv: python3 is needed for the MCP client tests (apt-get install python3 python3-venv)" >&2
  exit 2
fi
echo "mcp-client-venv: installing the MCP Python SDK into $venv" >&2
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --require-hashes --only-binary=:all: \
  --no-deps -r "$lock" >&2
"$venv/bin/python" -c 'import mcp, mcp_types' >&2
echo "$want" > "$stamp"
echo "$venv/bin/python"
