#!/usr/bin/env bash
# The robustness figures of issue 8, as one report: kill -9 at random moments
# of an index run (each followed by `vg-index --verify`, then a resumed run
# that must equal a clean build), hostile and odd inputs (each must end with
# its documented status and no panic), readers racing writers (no error may
# come of it), and the property tests run with many cases.
#
# usage: bench/robustness.sh [KILLS] [FUZZ_CASES]   (defaults: 20, 5000)
# Uses target/release (built if missing); takes a few minutes on 2 cores.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
kills=${1:-20}
fuzz_cases=${2:-5000}
bin=$repo/target/release
[[ -x $bin/vg-pick ]] || (cd "$repo" && cargo build --release --locked -q)
export PATH="$bin:$PATH"
work=$(mktemp -d)
trap 'chmod -R u+rwx "$work" 2>/dev/null; rm -rf "$work"' EXIT

# A project whose first index run takes several seconds.
make_tree() {
  mkdir -p "$1/.git" "$1/pkg"
  for i in $(seq -w 1 150); do
    { echo "def handler_$i(request):"
      for j in $(seq 1 14); do echo "    total_$j = request.part($i, $j)  # step $j of handler $i"; done
      echo "    return total_1"; } > "$1/pkg/mod$i.py"
  done
  printf 'def upload_with_retry(client, blob):\n    for attempt in range(5):\n        try:\n            return client.put(blob)\n        except ConnectionError:\n            pass\n' > "$1/pkg/upload.py"
}
counts() { vg-index --stats --json | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["files"], r["chunks"])'; }

# 1. kill -9
tree=$work/killed; make_tree "$tree"; cd "$tree"
survived=0
for n in $(seq 1 "$kills"); do
  # Every other run rebuilds from scratch, so that kills land in long runs too.
  if (( n % 2 )); then vg-index -q --reindex > /dev/null 2>&1 & else vg-index -q > /dev/null 2>&1 & fi
  pid=$!
  sleep "$(python3 -c "import random; print(round(random.uniform(0.05, 4.0), 2))")"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if vg-index --verify > /dev/null 2>&1; then survived=$((survived + 1)); else echo "  kill $n left a damaged index" >&2; fi
  # Edit a file between runs, as a user would.
  echo "# edit $n" >> "pkg/mod00$((n % 9 + 1)).py"
done
vg-index -q > /dev/null
resumed=$(counts); verified=$(vg-index --verify > /dev/null 2>&1 && echo sound || echo DAMAGED)
clean=$work/clean; mkdir -p "$clean/.git"; cp -r "$tree/pkg" "$clean/"; resumed_search=$(vg-query -q --no-index "retry a failed upload" | head -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["file"])')
cd "$clean"; vg-index -q > /dev/null; fresh=$(counts); cd "$tree"
equal=$([[ $resumed == "$fresh" ]] && echo "equal to a clean build ($fresh files/chunks)" || echo "DIFFERENT: $resumed vs clean $fresh")
echo "kill -9 during indexing: $survived of $kills kills left a sound index; resumed index $verified, $equal; top hit $resumed_search"

# 2. hostile and odd input: command, expected status
odd=$work/odd; mkdir -p "$odd/.git" "$odd/src" "$odd/loop"; cd "$odd"
printf 'def ok():\n    return 1\n' > src/ok.py
printf 'PNG\0\0\1binary' > src/logo.png
printf 'caf\xe9 = "latin-1 bytes"\n' > src/latin1.py
: > src/empty.py
head -c 2000000 /dev/zero | tr '\0' 'x' > src/huge.txt
python3 -c "print('x = ' + 'a' * 200000)" > src/longline.py
printf 'x = 1\n' > "src/with space.py"; printf 'y = 2\n' > "src/new
line.py"; printf 'z = 3\n' > $'src/bad\xffname.py'
mkfifo src/pipe
ln -s ../loop loop/self
ln -s /etc/passwd src/outside
vg-index -q > /dev/null 2>&1 || true
cases=(
  "0|vg-index -q ."
  "0|vg-index --verify"
  "2|vg-query -q ''"
  "2|vg-query -q '   '"
  "2|vg-query -q \"\$(head -c 5000 /dev/zero | tr '\\\\0' q)\""
  "1|vg-query -q --no-index --mode lexical --threshold 0.99 'zzzqqq'"
  "2|vg-query -q --mode lexical '?!#'"
  "0|vg-query -q --no-index --threshold -1 '?!#'"
  "2|vg-query -q --no-index x /etc"
  "2|vg-query -q -k 0 x"
  "2|vg-query -q --threshold nan x"
  "2|printf '{\"file\":\"a\"}\\n' | vg-format"
  "2|printf 'not json\\n' | vg-format"
  "2|printf '\\xff\\xfe\\n' | vg-format"
  "2|printf '{\"type\":\"hit\",\"v\":9,\"file\":\"a\",\"start_line\":1,\"end_line\":1}\\n' | vg-format"
  "1|printf '{\"type\":\"summary\"}\\n' | vg-format"
  "0|printf '{\"file\":\"src/ok.py\",\"start_line\":1,\"end_line\":2}\\n' | vg-format -C 5"
  "2|vg-index -L ."
  "2|vg-index --max-filesize abc"
  "2|XDG_CONFIG_HOME=$work/badcfg vg-index --stats"
  "2|vg-serve --bind 192.0.2.1"
  "0|vg-query -q --threshold -1 x | head -c 1"
)
mkdir -p "$work/badcfg/vecgrep"; printf 'top_k = "ten"\n' > "$work/badcfg/vecgrep/config.toml"
handled=0; tried=0
for c in "${cases[@]}"; do
  want=${c%%|*}; cmd=${c#*|}; tried=$((tried + 1))
  set +e; err=$(timeout 60 bash -o pipefail -c "$cmd" 2>&1 >/dev/null); got=$?; set -e
  if [[ $got == "$want" ]] && ! grep -q "panicked" <<<"$err"; then
    handled=$((handled + 1))
  else
    echo "  not handled: [$cmd] status $got (wanted $want): ${err:0:200}" >&2
  fi
done
echo "hostile and odd inputs: $handled of $tried handled with the documented status and no panic"

# 3. readers while writers write
tree=$work/busy; make_tree "$tree"; cd "$tree"; vg-index -q > /dev/null
reads=0; read_errors=0
( for _ in 1 2 3; do vg-index -q --reindex > /dev/null 2>&1 || echo "writer failed" >&2; done ) &
writer=$!
( vg-index -q > /dev/null 2>&1 || echo "second writer failed" >&2 ) &
second=$!
while kill -0 "$writer" 2>/dev/null; do
  set +e; vg-query -q --no-index --threshold -1 "handle a request" > /dev/null 2> "$work/read.err"; s=$?; set -e
  reads=$((reads + 1))
  if [[ $s -ge 2 ]]; then read_errors=$((read_errors + 1)); head -c 200 "$work/read.err" >&2; fi
done
wait "$writer" "$second"
verified=$(vg-index --verify > /dev/null 2>&1 && echo sound || echo DAMAGED)
echo "concurrency: $reads searches during 3 rebuilds and a second writer: $read_errors errors; index afterwards $verified"

# 4. property tests (fuzzing) with many cases
cd "$repo"
set +e; fuzz=$(PROPTEST_CASES=$fuzz_cases cargo test -q -p vecgrep-lib --lib fuzz 2>&1); set -e
props=$(grep -Eo '[0-9]+ passed' <<<"$fuzz" | head -1 | cut -d' ' -f1)
failed=$(grep -Eo '[0-9]+ failed' <<<"$fuzz" | head -1 | cut -d' ' -f1)
echo "fuzzing: ${props:-0} properties x $fuzz_cases cases = $(( ${props:-0} * fuzz_cases )) cases run, ${failed:-0} failed (NDJSON reader, config parser, chunker, URL and request-head parsing, model rewrite)"
