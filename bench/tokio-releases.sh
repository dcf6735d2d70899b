#!/usr/bin/env bash
# A real git history built offline: tokio's releases 1.40 to 1.50, fetched
# from the registry with cargo (one throwaway manifest each, cached in
# CARGO_HOME) and committed one release per commit, the release as its
# message, into a new repository.
#
# usage: bench/tokio-releases.sh DEST [FIRST_MINOR] [LAST_MINOR]
set -euo pipefail
dest=${1:?usage: bench/tokio-releases.sh DEST [FIRST_MINOR] [LAST_MINOR]}
first=${2:-40}
last=${3:-50}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src_of() { ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"tokio-1.$1.0" 2>/dev/null | head -1; }
for minor in $(seq "$first" "$last"); do
  [[ -n $(src_of "$minor") ]] && continue
  mkdir -p "$work/m$minor/src"
  printf '[package]\nname = "fetch%s"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\ntokio = { version = "=1.%s.0", default-features = false }\n' \
    "$minor" "$minor" >"$work/m$minor/Cargo.toml"
  : >"$work/m$minor/src/lib.rs"
  (cd "$work/m$minor" && cargo fetch -q)
done
rm -rf "$dest"
mkdir -p "$dest"
git -C "$dest" init -q -b main
for minor in $(seq "$first" "$last"); do
  src=$(src_of "$minor")
  find "$dest" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
  cp -R "$src"/. "$dest"/
  rm -f "$dest/.cargo_vcs_info.json" "$dest/.cargo-ok"
  git -C "$dest" add -A
  GIT_AUTHOR_DATE="2024-01-$((minor - first + 1))T12:00:00Z" GIT_COMMITTER_DATE="2024-01-$((minor - first + 1))T12:00:00Z" \
    git -C "$dest" -c user.name=release -c user.email=release@example.org commit -q -m "tokio 1.$minor.0"
  git -C "$dest" tag "v1.$minor.0"
done
echo "$dest: $(git -C "$dest" rev-list --count HEAD) releases, HEAD $(git -C "$dest" describe --tags)"
