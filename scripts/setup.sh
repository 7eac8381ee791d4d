#!/usr/bin/env bash
# Create the virtualenv and install the pinned dependencies; cheap when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv"
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.requirements.sha256
want=$(cat requirements.txt requirements-dev.txt constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "==> installing Python dependencies"
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt -c constraints.txt
  echo "$want" > "$stamp"
fi
