#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL server: finds the server binaries (installs them from
# the distribution's packages if they are missing), initdb's a cluster in a temporary directory,
# starts it on a free 127.0.0.1 port with its unix socket inside that directory, exports
# DATABASE_URL, runs the command, and stops the server and removes the directory on exit, also
# when the command fails or the script is interrupted.
#
#   scripts/ci/with-postgres.sh npm run test:cluster-pg
#
# PG_BIN=/path/to/bin selects the binaries explicitly.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 <command> [args...]" >&2
  exit 2
fi

log() { echo "with-postgres: $*" >&2; }

find_bin() {
  if [ -n "${PG_BIN:-}" ] && [ -x "$PG_BIN/initdb" ]; then
    echo "$PG_BIN"
    return 0
  fi
  # Debian/Ubuntu keep the server binaries out of PATH, one directory per major version: take the newest.
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
    echo "$dir"
    return 0
  fi
  # Other layouts (Homebrew, Fedora, a source build) put initdb in PATH.
  if command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
    return 0
  fi
  return 1
}

install_postgres() {
  if ! command -v apt-get >/dev/null 2>&1; then
    log "no PostgreSQL server binaries and no apt-get; install PostgreSQL or set PG_BIN"
    exit 1
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo=(sudo -n)
    else
      log "PostgreSQL is missing and installing it needs root (or passwordless sudo)"
      exit 1
    fi
  fi
  log "installing PostgreSQL from the distribution's packages"
  # Only the binaries are wanted: no default cluster, and no service started by the package.
  "${sudo[@]}" mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" | "${sudo[@]}" tee /etc/postgresql-common/createcluster.d/ci-no-main.conf >/dev/null
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql
}

BIN=$(find_bin || true)
if [ -z "$BIN" ]; then
  install_postgres
  BIN=$(find_bin || true)
  if [ -z "$BIN" ]; then
    log "PostgreSQL was installed but initdb was not found"
    exit 1
  fi
fi

# The server refuses to run as root: as root, run it as the package's `postgres` user (or nobody).
as_owner=()
owner=$(id -un)
if [ "$(id -u)" -eq 0 ]; then
  if id postgres >/dev/null 2>&1; then owner=postgres; else owner=nobody; fi
  as_owner=(runuser -u "$owner" --)
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ci-postgres.XXXXXX")
DATA="$TMP/data"
SOCK="$TMP/socket"
LOGFILE="$TMP/server.log"
started=0
child=

cleanup() {
  local status=$?
  trap - EXIT INT TERM HUP
  # Interrupted: the command goes first, while its database is still there.
  if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
    kill -TERM -- "-$child" 2>/dev/null || kill -TERM "$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
  fi
  if [ "$started" -eq 1 ] || [ -f "$DATA/postmaster.pid" ]; then
    # Immediate: the data is thrown away anyway, and no client should hold the stop up.
    ${as_owner[@]+"${as_owner[@]}"} "$BIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null 2>&1 || {
      log "pg_ctl stop failed; killing the postmaster"
      if [ -f "$DATA/postmaster.pid" ]; then kill -9 "$(head -n 1 "$DATA/postmaster.pid")" 2>/dev/null || true; fi
    }
  fi
  rm -rf "$TMP"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

mkdir -p "$SOCK"
chmod 755 "$TMP"
if [ "$(id -u)" -eq 0 ]; then chown -R "$owner" "$TMP"; fi

${as_owner[@]+"${as_owner[@]}"} "$BIN/initdb" -D "$DATA" -U postgres --auth=trust --encoding=UTF8 --no-locale >"$TMP/initdb.log" 2>&1 || {
  cat "$TMP/initdb.log" >&2
  log "initdb failed"
  exit 1
}

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# The port is free when chosen but could be taken before the server binds it: retry a few times.
for attempt in 1 2 3 4 5; do
  PORT=$(free_port)
  # fsync off: a test database that is deleted afterwards does not need durability across power loss.
  if ${as_owner[@]+"${as_owner[@]}"} "$BIN/pg_ctl" -D "$DATA" -l "$LOGFILE" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PORT -k $SOCK -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start >/dev/null; then
    started=1
    break
  fi
  log "start on port $PORT failed (attempt $attempt)"
  tail -n 20 "$LOGFILE" >&2 || true
done
if [ "$started" -ne 1 ]; then
  log "could not start PostgreSQL"
  exit 1
fi

export DATABASE_URL="postgres://postgres@127.0.0.1:$PORT/postgres"
export PGHOST=127.0.0.1 PGPORT="$PORT" PGUSER=postgres PGDATABASE=postgres
log "$("$BIN/postgres" --version) on 127.0.0.1:$PORT ($DATA)"

# In the background, so that a signal to this script runs the trap at once (bash defers traps while
# a foreground command runs), and in its own process group (job control), so that the trap can pass
# the signal on to everything the command started.
set +e
set -m
"$@" &
child=$!
set +m
wait "$child"
status=$?
child=
set -e
exit "$status"
