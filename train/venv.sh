#!/usr/bin/env bash
# The trainer's Python environment, made once from requirements.lock (PyPI
# wheels pinned by hash) in the training cache; prints its python.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${VECGREP_TRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vecgrep/train}
venv=$cache/venv
stamp=$venv/.lock-$(sha256sum "$here/requirements.lock" | cut -c1-16)
if [[ ! -f $stamp ]]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --no-deps --only-binary=:all: --require-hashes -r "$here/requirements.lock" >&2 \
    || { echo "venv: pip could not install requirements.lock (is PyPI reachable?)" >&2; exit 2; }
  touch "$stamp"
fi
echo "$venv/bin/python"
