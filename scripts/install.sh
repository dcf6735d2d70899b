#!/usr/bin/env bash
# Install vecgrep under a prefix, so that the tools are on PATH, `man vecgrep`
# works and the shells complete the flags: the twelve binaries into PREFIX/bin,
# the model and ONNX Runtime into PREFIX/share/vecgrep (where the binaries
# look first), the man pages into PREFIX/share/man, and completions for bash,
# zsh and fish where those shells look under PREFIX. Every installed file is
# listed in PREFIX/share/vecgrep/installed-files; --uninstall removes those
# and nothing else (with the default prefix, PREFIX/share/vecgrep also holds
# your catalogs, which stay).
#
# usage: scripts/install.sh [--prefix DIR] [--bin-dir DIR] [--uninstall]
#   --prefix   where to install (default: ~/.local)
#   --bin-dir  take the binaries from DIR (default: target/release, built if missing)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
prefix="$HOME/.local"
bin_dir=""
uninstall=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --prefix|--bin-dir)
      [[ $# -ge 2 && -n $2 && $2 != --* ]] || { echo "install: $1 needs a directory" >&2; exit 2; }
      if [[ $1 == --prefix ]]; then prefix="$2"; else bin_dir="$2"; fi
      shift 2 ;;
    --uninstall) uninstall=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "install: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
prefix=${prefix%/}
data="$prefix/share/vecgrep"
manifest="$data/installed-files"
# The files scripts/fetch-assets.sh installs, by scripts/assets.lock.
# The prefix reaches awk through the environment: as text of a sed or awk
# program, `&`, `\` or `|` in it named another directory (review 185).
assets() { D="$data" awk '!/^#/ && NF == 3 { print ENVIRON["D"] "/" $3 }' "$repo/scripts/assets.lock"; }

if [[ $uninstall == 1 ]]; then
  [[ -f $manifest ]] || { echo "install: nothing to uninstall: $manifest does not exist" >&2; exit 2; }
  # What was installed, and nothing else: never the whole of $data, which
  # with the default prefix is also where the user's catalogs live. The
  # assets are listed by the lock too, for a manifest from before they were.
  dirs=()
  while IFS= read -r f; do
    [[ -n $f && ! -d $f ]] || continue
    rm -f -- "$f"
    dirs+=("$(dirname -- "$f")")
  done < <(cat "$manifest"; assets)
  rm -f -- "$manifest"
  # Then the directories left empty, up to the prefix.
  for d in "${dirs[@]}" "$data"; do
    while [[ $d == "$prefix"/* ]] && rmdir -- "$d" 2>/dev/null; do d=$(dirname -- "$d"); done
  done
  echo "install: removed vecgrep from $prefix" >&2
  exit 0
fi

tools=(vecgrep vg-root vg-index vg-query vg-format vg-answer vg-ask vg-log vg-catalog vg-serve vg-mcp vg-pick)
if [[ -z $bin_dir ]]; then
  bin_dir="$repo/target/release"
  for t in "${tools[@]}"; do
    [[ -x $bin_dir/$t ]] || { (cd "$repo" && cargo build --release --locked); break; }
  done
fi
for t in "${tools[@]}"; do
  [[ -x $bin_dir/$t ]] || { echo "install: $bin_dir/$t is missing; build first (cargo build --release)" >&2; exit 2; }
done

"$repo/scripts/fetch-assets.sh" --data-dir "$prefix/share/vecgrep"

installed=()
put() { # source, destination directory, mode
  install -d "$2"
  install -m "$3" "$1" "$2/"
  installed+=("$2/$(basename "$1")")
}
for t in "${tools[@]}"; do put "$bin_dir/$t" "$prefix/bin" 755; done
for page in "$repo"/man/*.1; do put "$page" "$prefix/share/man/man1" 644; done
for page in "$repo"/man/*.7; do put "$page" "$prefix/share/man/man7" 644; done
for t in "${tools[@]}"; do
  put "$repo/completions/$t.bash" "$prefix/share/bash-completion/completions" 644
  # bash-completion looks for a file named after the command.
  mv "$prefix/share/bash-completion/completions/$t.bash" "$prefix/share/bash-completion/completions/$t"
  installed[-1]="$prefix/share/bash-completion/completions/$t"
  put "$repo/completions/_$t" "$prefix/share/zsh/site-functions" 644
  put "$repo/completions/$t.fish" "$prefix/share/fish/vendor_completions.d" 644
done
{ printf '%s\n' "${installed[@]}"; assets; } > "$manifest"

echo "install: vecgrep is in $prefix/bin; man pages in $prefix/share/man; completions for bash, zsh and fish" >&2
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "install: add $prefix/bin to PATH (man finds the pages from there)" >&2 ;;
esac
echo "install: zsh: add $prefix/share/zsh/site-functions to fpath if it is not there already" >&2
