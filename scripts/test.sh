#!/usr/bin/env bash
# Set up everything the tests need (Docker engine, base image, Chromium) and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/ensure-docker.sh
bash scripts/ensure-base-image.sh
if ! command -v chromium >/dev/null 2>&1; then
  echo "==> installing Chromium"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

echo "==> ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check . >/dev/null || { .venv/bin/ruff format --diff . | head -50; exit 1; }

echo "==> pytest"
exec .venv/bin/pytest "$@"
