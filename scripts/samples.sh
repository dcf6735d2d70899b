#!/usr/bin/env bash
# Remakes the golden streams of spec/samples from real runs of the tools, as
# spec/ndjson.md's Samples table says each was made: a sample is real output,
# and one left from before a change to the ranking no longer is.
#
# usage: scripts/samples.sh [OUT]   writes OUT/*.ndjson (default spec/samples)
#
# The tools are taken from PATH (put target/release or target/debug first).
# The projects are made in a temporary directory, whose name is replaced by
# /home/user/project (/home/user/src for a catalog's projects), and the
# figures of time by round values. answered.ndjson asks a real chat model
# (scripts/llm-server.sh, which fetches it once).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here/../spec/samples}" && cd "${1:-$here/../spec/samples}" && pwd)
work=$(mktemp -d)
trap '"$here/llm-server.sh" stop "$work/llm" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
export XDG_CONFIG_HOME=$work/config VECGREP_CATALOG_DIR=$work/catalogs
for tool in vg-index vg-query vg-answer vg-ask vg-log vg-root vg-catalog vg-serve; do
  command -v "$tool" >/dev/null || { echo "samples: $tool is not on PATH" >&2; exit 2; }
done

# The temporary directory as the docs name it; times as round values.
shown() {
  sed -e "s#$work/catalogs#/home/user/.local/share/vecgrep/catalogs#g" -e "s#$work/src#/home/user/src#g" \
    -e "s#$1#/home/user/project#g" -e 's/"seconds":[0-9.e-]*/"seconds":0.5/' \
    -e 's/"\(latency_ms\|plan_ms\|search_ms\|answer_ms\)":[0-9.]*/"\1":10.0/g' \
    -e 's/"db_size_bytes":[0-9]*/"db_size_bytes":69632/'
}

project() {
  rm -rf "$work/project" && mkdir -p "$work/project" && cd "$work/project" && git init -q
}

# The first project: an index run that meets every kind of file record.
project
mkdir src
cat > src/config.rs <<'EOF'
/// Load settings from a TOML file, falling back to defaults.
pub fn load_config(path: &str) -> Config {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    toml::from_str(&text).unwrap_or_default()
}
EOF
cat > src/retry.rs <<'EOF'
/// Try `op` up to three times.
pub fn retry<T>(mut op: impl FnMut() -> Option<T>) -> Option<T> {
    (0..3).find_map(|_| op())
}
EOF
printf 'fn main() {\n    println!("hello");\n}\n' > src/main.rs
printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR' > logo.png
vg-index --full >/dev/null
cat > src/retry.rs <<'EOF'
/// Try `op` up to `attempts` times, sleeping longer after each failure.
pub fn retry<T>(attempts: u32, mut op: impl FnMut() -> Option<T>) -> Option<T> {
    for attempt in 0..attempts {
        if let Some(v) = op() {
            return Some(v);
        }
        std::thread::sleep(std::time::Duration::from_millis(100 << attempt));
    }
    None
}
EOF
rm src/main.rs
cat > src/server.rs <<'EOF'
/// Bind the HTTP listener on the configured port.
pub fn listen(port: u16) -> std::io::Result<std::net::TcpListener> {
    std::net::TcpListener::bind(("127.0.0.1", port))
}
EOF
mkdir data && head -c 1300001 /dev/zero | tr '\0' 'x' > data/dump.sql
dir=$PWD
vg-index --full | shown "$dir" > "$out/index.ndjson"
vg-query -k 3 --threshold 0.1 "read the config file" | shown "$dir" > "$out/hits.ndjson"
vg-root --json | shown "$dir" > "$out/root.ndjson"
vg-index --stats --json | shown "$dir" > "$out/stats.ndjson"
vg-index --verify --json | shown "$dir" > "$out/verify.ndjson"

# A concept the query names, then the same project without it, answered.
project
mkdir -p src .vecgrep/kg
cat > src/books.py <<'EOF'
class AccountBook:
    """Entries of money in and out, balanced at the end of each period."""

    def post_entry(self, entry):
        self.entries.append(entry)

    def balance(self):
        return sum(e.amount for e in self.entries)
EOF
cat > src/web.py <<'EOF'
def saml_login(request):
    assertion = request.form['SAMLResponse']
    return verify(assertion)
EOF
printf '# Ledger\n\nsynonyms:: AccountBook, journal\n' > .vecgrep/kg/ledger.md
dir=$PWD
vg-index --full >/dev/null
vg-query -k 2 --judge "where is the ledger balanced" | shown "$dir" > "$out/judged.ndjson"
rm -r .vecgrep/kg
url=$("$here/llm-server.sh" start "$work/llm")
vg-query -k 2 --judge --threshold 0 "which class keeps the ledger" | vg-answer --learn --llm-url "$url" |
  shown "$dir" > "$out/answered.ndjson"
"$here/llm-server.sh" stop "$work/llm" >/dev/null

# The history of an upload client.
project
mkdir src
commit() { # date author email subject [body]
  git add -A
  GIT_AUTHOR_DATE=$1 GIT_COMMITTER_DATE=$1 git -c user.name="$2" -c user.email="$3" commit -q -m "$4" ${5:+-m "$5"}
}
printf 'import time\n\ndef upload(client, path):\n    return client.put(path)\n' > src/upload.py
commit 2024-01-10T10:00:00+00:00 "Ada Lovelace" ada@example.org "Add the upload client"
cat > src/upload.py <<'EOF'
import time

def upload(client, path, attempts=5):
    """Upload a file, trying again with a longer wait after each failure."""
    for attempt in range(attempts):
        try:
            return client.put(path)
        except ConnectionError:
            time.sleep(2 ** attempt)
    raise RuntimeError('upload failed')
EOF
commit 2024-02-10T10:00:00+00:00 "Grace Hopper" grace@example.org "Retry failed uploads with exponential backoff" \
  "A dropped connection no longer loses the file: each upload is tried
up to five times, waiting twice as long after each failure."
printf "# Configuration\n\nSettings are read from config.toml when the client starts.\n" > CONFIG.md
commit 2024-03-10T10:00:00+00:00 "Ada Lovelace" ada@example.org "Document the configuration"
dir=$PWD
{
  vg-log --with-diff -k 2 --threshold 0 "try again when the connection drops"
  vg-log --diffs-only -k 1 --threshold 0 "wait longer after each failed attempt"
} | shown "$dir" > "$out/commits.ndjson"

# A question, and its plan.
project
mkdir -p src/net
cat > src/net/upload.rs <<'EOF'
/// Send a blob, trying again with backoff while the server is busy.
pub fn upload_with_retry(client: &Client, blob: &[u8], attempts: u32) -> Result<()> {
    for attempt in 0..attempts {
        match client.put(blob) {
            Ok(()) => return Ok(()),
            Err(e) if e.is_busy() => sleep(backoff(attempt)),
            Err(e) => return Err(e),
        }
    }
    Err(Error::GaveUp)
}
EOF
cat > src/net/upload.py <<'EOF'
def upload_with_retry(client, blob, attempts=5):
    for attempt in range(attempts):
        try:
            return client.put(blob)
        except Busy:
            time.sleep(2 ** attempt)
    raise GaveUp()
EOF
dir=$PWD
vg-ask --json "where do we retry uploads" | shown "$dir" > "$out/ask.ndjson"
vg-ask --plan "rust files changed this week that retry uploads" |
  sed 's/"modified_after":"[^"]*"/"modified_after":"2026-11-19T15:42:06Z"/' > "$out/plan.ndjson"
vg-serve --port 0 > "$work/serve.out" 2>/dev/null &
serving=$!
while ! [ -s "$work/serve.out" ]; do sleep 0.1; done
kill "$serving"; wait "$serving" 2>/dev/null || true
head -1 "$work/serve.out" | sed 's#127.0.0.1:[0-9]*#127.0.0.1:7878#' | shown "$dir" > "$out/listening.ndjson"

# Two projects searched as one.
mkdir -p "$work/src/api/src" "$work/src/billing"
(cd "$work/src/api" && git init -q && cat > src/upload.rs <<'EOF'
/// Upload a file, retrying with exponential backoff when the network fails.
pub fn upload_with_backoff(path: &Path) -> Result<()> {
    retry(5, || put(path))
}
EOF
)
(cd "$work/src/billing" && git init -q && cat > invoice.py <<'EOF'
def send_invoice(tenant):
    """Email the monthly invoice to a tenant as a PDF."""
    mail(tenant.email, render_pdf(tenant))
EOF
)
cd "$work/src"
vg-catalog add team api billing >/dev/null
vg-catalog use team >/dev/null
{
  vg-catalog list --json
  vg-query --catalog team -k 2 --threshold 0 "email the invoice to a customer"
} | shown "$work/src" > "$out/catalog.ndjson"
echo "samples: wrote $(ls "$out"/*.ndjson | wc -l) streams to $out" >&2
