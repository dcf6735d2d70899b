#!/usr/bin/env bash
# How a search's cost grows with the results asked for (-k, up to 10,000):
# a tree of 300 Python files of 100 small functions each, whose chunks
# join into places of up to 40 lines, searched by a word every one holds,
# in each mode; then (`few`) 20 text files of 5,000 lines, thousands of
# results to a file; then (`one`) one text file of 100,000 lines (6.7 MB,
# under a raised max_filesize). Prints the median ms of 3 runs per build,
# tree, mode and -k. Joining once cut every result again at each join (-k
# 2600: 25 s), then every result of the file joined (few, -k 6000: 63 s in
# a debug build, 3.3 s after), and each result read all its file's chunks
# from the store (one, -k 6000: 36 s in a debug build, 2.8 s after).
#
# usage: [KS="100 2400"] bench/many-results.sh BIN_DIR [BIN_DIR...]   (default: target/release)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bins=("$@")
[[ ${#bins[@]} -gt 0 ]] || bins=("$repo/target/release")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
git init -q
python3 - <<'PY'
for f in range(300):
    with open(f"m{f}.py", "w") as out:
        out.write("".join(f"def step_{f}_{i}(x):\n    return x + {i}\n\n" for i in range(100)))
PY
"${bins[0]}/vg-index" -q > /dev/null
mkdir few && (cd few && git init -q && python3 - <<'PY'
import random
random.seed(1)
words = "retry upload config parse handler error buffer socket stream token".split()
for f in range(20):
    with open(f"f{f}.txt", "w") as out:
        out.write("".join(" ".join(random.choice(words) for _ in range(10)) + "\n" for _ in range(5000)))
PY
"${bins[0]}/vg-index" -q > /dev/null)
mkdir one && (cd one && git init -q && python3 - <<'PY'
import random
random.seed(1)
words = "retry upload config parse handler error buffer socket stream token".split()
with open("big.txt", "w") as out:
    out.write("".join(" ".join(random.choice(words) for _ in range(10)) + "\n" for _ in range(100000)))
PY
"${bins[0]}/vg-index" -q --max-filesize 10M > /dev/null)
printf '%-40s %-5s %-8s %6s %10s\n' build tree mode k ms
for bin in "${bins[@]}"; do
  for mode in lexical hybrid; do
    for k in ${KS:-100 2400 2600 10000}; do
      ms=$("$repo/bench/median-ms.py" 3 "$bin/vg-query" --no-index --mode "$mode" --threshold -1 -k "$k" step)
      printf '%-40s %-5s %-8s %6s %10s\n' "$bin" many "$mode" "$k" "$ms"
      ms=$(cd few && "$repo/bench/median-ms.py" 3 "$bin/vg-query" --no-index --mode "$mode" --threshold -1 -k "$k" "retry upload")
      printf '%-40s %-5s %-8s %6s %10s\n' "$bin" few "$mode" "$k" "$ms"
      ms=$(cd one && "$repo/bench/median-ms.py" 3 "$bin/vg-query" --no-index --max-filesize 10M --mode "$mode" --threshold -1 -k "$k" "retry upload")
      printf '%-40s %-5s %-8s %6s %10s\n' "$bin" one "$mode" "$k" "$ms"
    done
  done
done
