#!/usr/bin/env bash
# Set up everything the tests need (Redis, PostgreSQL, Docker engine, base image, Chromium) and
# run every test.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/ensure-redis.sh
bash scripts/ensure-postgres.sh  # the team topology tests run on PostgreSQL
bash scripts/ensure-docker.sh
bash scripts/ensure-base-image.sh
if ! command -v chromium >/dev/null 2>&1; then
  echo "==> installing Chromium"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
if ! command -v bwrap >/dev/null 2>&1 || ! ldconfig -p | grep libseccomp.so.2 >/dev/null; then
  echo "==> installing bubblewrap and libseccomp (the bwrap backend's sandbox and filter)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap libseccomp2 >/dev/null
fi
# The bwrap suite fails rather than skips when its sandbox cannot be made here.
export JAZZMINE_REQUIRE_BWRAP=1

echo "==> ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check . >/dev/null || { .venv/bin/ruff format --diff . | head -50; exit 1; }

echo "==> pytest (the embedded default: SQLite)"
.venv/bin/pytest "$@"

# Asked for some tests only (`scripts/test.sh tests/core -x`): those, once.
for arg in "$@"; do
  if [ -e "$arg" ] || [[ "$arg" == tests/* ]]; then exit 0; fi
done
# The web suite again on a team's database: PostgreSQL through psycopg's pool (the test database
# is created and dropped per session; its name carries the process id).
echo "==> pytest tests/web on PostgreSQL"
JAZZMINE_DATABASE_URL="postgres://jazzmine:jazzmine@127.0.0.1:5432/jazzmine" \
JAZZMINE_SECRET_KEY="test-only-shared-secret-key-$(hostname)-0123456789" \
JAZZMINE_SECRETS_KEY="test-only-shared-secrets-key-$(hostname)-0123456789" \
  exec .venv/bin/pytest "$@" tests/web
