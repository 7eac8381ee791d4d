#!/usr/bin/env bash
# Set everything up on a fresh machine and start Jazzmine Studio with demo data:
# Redis, then daphne (web), one Celery worker and beat together, stopped together by Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/ensure-redis.sh
if [ "${JAZZMINE_SKIP_DOCKER:-0}" != "1" ]; then
  bash scripts/ensure-docker.sh
  bash scripts/ensure-base-image.sh
fi

# Debug off, as a team runs it: no tracebacks on error pages, and no per-query bookkeeping
# in the processes a run goes through. `JAZZMINE_DEBUG=true bash scripts/run.sh` turns it on.
export JAZZMINE_DEBUG=${JAZZMINE_DEBUG:-false}
export JAZZMINE_VAR_DIR=${JAZZMINE_VAR_DIR:-$PWD/var}
export JAZZMINE_HOST=${JAZZMINE_HOST:-127.0.0.1}
export JAZZMINE_PORT=${JAZZMINE_PORT:-8000}
export JAZZMINE_WORKER_CONCURRENCY=${JAZZMINE_WORKER_CONCURRENCY:-4}
# honcho kills what still runs 5 s after Ctrl-C: the worker stops its runs before that, and
# removes their sandboxes, rather than be killed with them.
export JAZZMINE_WORKER_GRACE_SECONDS=${JAZZMINE_WORKER_GRACE_SECONDS:-2}
source scripts/instance-lock.sh  # one instance per var folder, on a free port
PY=.venv/bin/python
$PY manage.py migrate --no-input
$PY manage.py seed_demo

echo "==> Jazzmine Studio on http://$JAZZMINE_HOST:$JAZZMINE_PORT/ (web, worker and beat; Ctrl-C stops all)"
exec .venv/bin/honcho --procfile Procfile --app-root "$PWD" start
