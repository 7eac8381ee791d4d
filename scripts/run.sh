#!/usr/bin/env bash
# Set everything up on a fresh machine and start Jazzmine Studio with demo data.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
if [ "${JAZZMINE_SKIP_DOCKER:-0}" != "1" ]; then
  bash scripts/ensure-docker.sh
  bash scripts/ensure-base-image.sh
fi

export JAZZMINE_DEBUG=${JAZZMINE_DEBUG:-true}
PY=.venv/bin/python
$PY manage.py migrate --no-input
$PY manage.py seed_demo

HOST=${JAZZMINE_HOST:-127.0.0.1}
PORT=${JAZZMINE_PORT:-8000}
echo "==> Jazzmine Studio on http://$HOST:$PORT/"
exec .venv/bin/daphne -b "$HOST" -p "$PORT" jazzmine_web.asgi:application
