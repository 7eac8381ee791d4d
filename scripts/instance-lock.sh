# Sourced by scripts/run.sh: make sure this is the only instance of its deployment, and that
# its port is free, before anything starts. A second run.sh printed "Jazzmine Studio on ..."
# and then started a web process that could never listen (retried for good), a second worker
# under the first one's name and a second beat, which the README says there is one of.
#
# The lock is an open file descriptor (9) on the deployment's var folder: it stays held by
# honcho, which run.sh `exec`s into, and by everything it starts, and goes when they end, a
# kill -9 included; no stale pid file to clean up.
mkdir -p "$JAZZMINE_VAR_DIR"
exec 9>"$JAZZMINE_VAR_DIR/run.lock"
if ! flock -n 9; then
  echo "run.sh: Jazzmine Studio already runs on $JAZZMINE_VAR_DIR (its web, worker and beat);" \
    "stop it first (Ctrl-C where it was started), or start another with its own" \
    "JAZZMINE_VAR_DIR, JAZZMINE_PORT and JAZZMINE_DEPLOYMENT" >&2
  exit 1
fi
# SO_REUSEADDR as the web process binds: a port left in TIME_WAIT by the last stop is free.
if ! .venv/bin/python - "$JAZZMINE_HOST" "$JAZZMINE_PORT" <<'PY'
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
family = socket.AF_INET6 if ":" in host else socket.AF_INET
with socket.socket(family) as probe:
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        probe.bind((host, port))
    except OSError as exc:
        sys.exit(f"run.sh: {host}:{port} is taken ({exc.strerror}): another program listens "
                 "there; stop it, or choose another port with JAZZMINE_PORT")
PY
then
  exit 1
fi
