#!/usr/bin/env bash
# Make sure PostgreSQL answers on loopback with a `jazzmine` role that may create databases
# (the test suite's PostgreSQL runs); install and start Debian's cluster when none does.
set -euo pipefail
# shellcheck source=lib/install-missing.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/install-missing.sh"

PORT="${JAZZMINE_PG_PORT:-5432}"
WAIT_SECONDS="${JAZZMINE_PG_WAIT:-30}"

install_missing ensure-postgres pg_ctlcluster postgresql

if ! pg_isready -q -h 127.0.0.1 -p "$PORT"; then
  version="$(ls /etc/postgresql | sort -V | tail -1)"
  if [ -z "$version" ]; then
    echo "ensure-postgres: no cluster under /etc/postgresql" >&2
    exit 1
  fi
  echo "ensure-postgres: starting cluster $version/main"
  pg_ctlcluster "$version" main start
  for _ in $(seq 1 "$WAIT_SECONDS"); do
    pg_isready -q -h 127.0.0.1 -p "$PORT" && break
    sleep 1
  done
fi
pg_isready -q -h 127.0.0.1 -p "$PORT" || { echo "ensure-postgres: not answering" >&2; exit 1; }

as_postgres() { su postgres -c "$1"; }
if ! as_postgres "psql -p $PORT -tAc \"SELECT 1 FROM pg_roles WHERE rolname='jazzmine'\"" | grep -q 1; then
  echo "ensure-postgres: creating role jazzmine"
  as_postgres "psql -p $PORT -qc \"CREATE ROLE jazzmine LOGIN PASSWORD 'jazzmine' CREATEDB\""
fi
if ! as_postgres "psql -p $PORT -tAc \"SELECT 1 FROM pg_database WHERE datname='jazzmine'\"" | grep -q 1; then
  as_postgres "psql -p $PORT -qc \"CREATE DATABASE jazzmine OWNER jazzmine\""
fi
echo "ensure-postgres: PostgreSQL ready (postgres://jazzmine:jazzmine@127.0.0.1:$PORT/jazzmine)"
