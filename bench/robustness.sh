#!/usr/bin/env bash
# The robustness figures of issue 8, as one report: kill -9 at random moments
# of an index run (each followed by `vg-index --verify`, then a resumed run
# that must equal a clean build), hostile and odd inputs (each must end with
# its documented status and no panic), readers racing writers (no error may
# come of it), and the property tests run with many cases. Issue 42 added
# slow clients against vg-serve (its latency while hundreds of silent and
# dripping connections are open) and a poisoning attempt on a shared index
# in a real Postgres (scripts/pg-server.sh).
#
# usage: bench/robustness.sh [KILLS] [FUZZ_CASES]   (defaults: 20, 5000)
# Uses target/release (built if missing), or the binaries in $VG_BIN; takes
# a few minutes on 2 cores.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
kills=${1:-20}
fuzz_cases=${2:-5000}
bin=${VG_BIN:-$repo/target/release}
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

# 5. slow clients: searches timed alone, then while 200 silent and 200
# dripping connections (a byte every 200 ms) are open from 127.0.0.1 and
# 10 more addresses; and how many of one address's connections stay open.
tree=$work/served; make_tree "$tree"; cd "$tree"; vg-index -q > /dev/null
vg-serve -q --rate-limit 0 > "$work/serve.out" 2> /dev/null &
server=$!
for _ in $(seq 1 100); do [[ -s $work/serve.out ]] && break; sleep 0.1; done
url=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["listening"])' "$work/serve.out")
slow=$(python3 - "$url" <<'PY'
import socket, sys, threading, time, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
addr = (u.hostname, u.port)
def search(local="127.0.0.1", limit=60.0):
    t = time.perf_counter()
    s = socket.socket(); s.settimeout(limit); s.bind((local, 0)); s.connect(addr)
    s.sendall(b"GET /search?q=retry+a+failed+upload HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    data = b""
    try:
        while chunk := s.recv(65536): data += chunk
    except OSError: return None
    return (time.perf_counter() - t) * 1000 if data.startswith(b"HTTP/1.1 200") else None
alone = sorted(search() for _ in range(10))
held = []
for i in range(420):
    local = "127.0.0.1" if i < 200 else f"127.0.0.{2 + i % 10}"
    s = socket.socket(); s.settimeout(2.0); s.bind((local, 0))
    try: s.connect(addr); held.append(s)
    except OSError: pass
stop = threading.Event()
def drip():
    while not stop.is_set():
        for s in held[::2]:
            try: s.send(b"G")
            except OSError: pass
        time.sleep(0.2)
def still_open(socks):
    n = 0
    for s in socks:
        s.setblocking(False)
        try: n += 0 if s.recv(1, socket.MSG_PEEK) == b"" else 1
        except BlockingIOError: n += 1
        except OSError: pass
    return n
time.sleep(0.5)
open_now = still_open(held[:200])
threading.Thread(target=drip, daemon=True).start()
under = [search(local, 15.0) for local in ["127.0.0.1", "127.0.0.30"] * 10]
stop.set()
failed = sum(1 for t in under if t is None)
done = sorted(t for t in under if t is not None) or [float("nan")]
print(f"{len(held)} of 420 slow connections made; searches p50 {alone[5]:.0f} ms alone, {done[len(done)//2]:.0f} ms (max {done[-1]:.0f} ms) "
      f"among them, {failed} of {len(under)} not answered within 15 s; {open_now} of one address's 200 held open by the server")
PY
)
kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true
echo "slow clients: $slow"

# 6. a cloned repository that names another project's shared index
# (store_project in its own config) tries to write into it and clear it.
# The server's directory is its own (as root it runs as nobody, who may not enter $work).
pg=$(mktemp -d); pgurl=$("$repo/scripts/pg-server.sh" start "$pg")
trap '"$repo/scripts/pg-server.sh" stop "$pg" >/dev/null 2>&1; rm -rf "$pg"; chmod -R u+rwx "$work" 2>/dev/null; rm -rf "$work"' EXIT
victim=$work/victim; make_tree "$victim"; mkdir -p "$work/victim-config/vecgrep" "$work/attacker-config/vecgrep"
printf 'store_url = "%s"\nstore_project = "payments-api"\n' "$pgurl" > "$work/victim-config/vecgrep/config.toml"
printf 'store_url = "%s"\n' "$pgurl" > "$work/attacker-config/vecgrep/config.toml"
(cd "$victim" && XDG_CONFIG_HOME=$work/victim-config vg-index -q > /dev/null)
victim_state() {
  (cd "$victim" && XDG_CONFIG_HOME=$work/victim-config vg-index --verify --json 2>/dev/null || true) \
    | python3 -c 'import json,sys
try: r = json.load(sys.stdin); print(r["ok"], r["files"], r["chunks"])
except ValueError: print("no index")'
}
before_state=$(victim_state)
attacker=$work/attacker; mkdir -p "$attacker/.git/" "$attacker/.vecgrep" "$attacker/pkg"
printf 'def upload_with_retry(client, blob):\n    send_to_attacker(blob)\n' > "$attacker/pkg/upload.py"
printf 'store_project = "payments-api"\n' > "$attacker/.vecgrep/config.toml"
attempts=("vecgrep -q 'retry a failed upload'" "vg-index -q" "vg-index -q --reindex" "vg-index -q --clear-cache"
  "vg-index -q --store-project payments-api" "vg-index -q --store-project payments-api --clear-cache"
  "vg-index -q --trust-project-config --clear-cache")
refused=0
for a in "${attempts[@]}"; do
  set +e; (cd "$attacker" && XDG_CONFIG_HOME=$work/attacker-config timeout 120 bash -c "$a" > /dev/null 2>&1); [[ $? == 2 ]] && refused=$((refused + 1)); set -e
done
after_state=$(victim_state)
top=$( (cd "$victim" && XDG_CONFIG_HOME=$work/victim-config vg-query -q --no-index "retry a failed upload" 2>/dev/null || true) | head -1 \
  | python3 -c 'import json,sys
try: print("victim" if "ConnectionError" in json.load(sys.stdin)["text"] else "ATTACKER")
except ValueError: print("none")')
intact=$([[ $before_state == "$after_state" && $top == victim ]] && echo "intact ($after_state)" || echo "POISONED ($before_state -> $after_state; top hit from: $top)")
echo "shared-index poisoning: ${#attempts[@]} attempts by a cloned repository ($refused refused with status 2); victim's index $intact"

# 4. property tests (fuzzing) with many cases
cd "$repo"
set +e; fuzz=$(PROPTEST_CASES=$fuzz_cases cargo test -q -p vecgrep-lib --lib fuzz 2>&1); set -e
props=$(grep -Eo '[0-9]+ passed' <<<"$fuzz" | head -1 | cut -d' ' -f1)
failed=$(grep -Eo '[0-9]+ failed' <<<"$fuzz" | head -1 | cut -d' ' -f1)
echo "fuzzing: ${props:-0} properties x $fuzz_cases cases = $(( ${props:-0} * fuzz_cases )) cases run, ${failed:-0} failed (NDJSON reader, config parser, chunker, URL and request-head parsing, model rewrite)"
