#!/usr/bin/env bash
# Make sure PostgreSQL answers on loopback with a `jazzmine` role that may create databases
# (the test suite's PostgreSQL runs); install and start Debian's cluster when none does.
set -euo pipefail

PORT="${JAZZMINE_PG_PORT:-5432}"
WAIT_SECONDS="${JAZZMINE_PG_WAIT:-30}"

if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  if [ "$(id -u)" != "0" ]; then
    echo "ensure-postgres: postgresql is missing and installing it needs root" >&2
    exit 1
  fi
  echo "ensure-postgres: installing postgresql"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi

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
