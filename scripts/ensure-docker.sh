#!/usr/bin/env bash
# Make sure a Docker engine answers; install and start one when none does. Idempotent.
set -euo pipefail
# shellcheck source=lib/install-missing.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/install-missing.sh"

LOG_DIR="${JAZZMINE_DOCKERD_LOG_DIR:-/tmp}"
LOG_FILE="$LOG_DIR/jazzmine-dockerd.log"
WAIT_SECONDS="${JAZZMINE_DOCKERD_WAIT:-60}"

if docker info >/dev/null 2>&1; then
  # An engine whose default bridge was removed (a second dockerd started with --bridge=none
  # deletes docker0) starts no sandbox with a network: start it again, it recreates the bridge.
  if [ "$(id -u)" = "0" ] && command -v ip >/dev/null 2>&1 && ! ip link show docker0 >/dev/null 2>&1 \
      && pgrep -x dockerd >/dev/null; then
    # An engine a supervisor runs is the supervisor's to restart, not this script's.
    if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet docker 2>/dev/null; then
      echo "ensure-docker: docker0 is gone, and systemd runs dockerd: systemctl restart docker" >&2
      exit 0
    fi
    echo "ensure-docker: docker0 is gone; restarting dockerd to recreate it"
    pkill -x dockerd || true
    for _ in $(seq 1 30); do pgrep -x dockerd >/dev/null || break; sleep 1; done
  else
    echo "ensure-docker: engine already answering"
    exit 0
  fi
fi

install_missing ensure-docker dockerd docker.io

if [ "$(id -u)" != "0" ]; then
  echo "ensure-docker: no engine answers and starting dockerd needs root" >&2
  exit 1
fi

mkdir -p "$LOG_DIR"
echo "ensure-docker: starting dockerd (log: $LOG_FILE)"
# setsid: the engine must outlive this script and the shell that called it.
setsid nohup dockerd >"$LOG_FILE" 2>&1 </dev/null &

for _ in $(seq 1 "$WAIT_SECONDS"); do
  if docker info >/dev/null 2>&1; then
    echo "ensure-docker: engine ready"
    exit 0
  fi
  sleep 1
done

echo "ensure-docker: dockerd did not answer within ${WAIT_SECONDS}s; last log lines:" >&2
tail -n 20 "$LOG_FILE" >&2 || true
exit 1
