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

echo "==> pytest"
exec .venv/bin/pytest "$@"
