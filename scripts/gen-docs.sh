#!/usr/bin/env bash
# Regenerate man/ and completions/ from the binaries' clap definitions.
set -euo pipefail
cd "$(dirname "$0")/.."
VECGREP_BLESS=1 cargo test -q -p vecgrep-bins --test cli docs:: >/dev/null
git status --short man completions
