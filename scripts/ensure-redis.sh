#!/usr/bin/env bash
# Make sure Redis answers at JAZZMINE_REDIS_URL; install and start one on loopback when none
# does (the embedded default: the Celery broker and the channel layer). Idempotent.
set -euo pipefail
# shellcheck source=lib/install-missing.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/install-missing.sh"
cd "$(dirname "$0")/.."

URL="${JAZZMINE_REDIS_URL:-redis://127.0.0.1:6379/0}"
WAIT_SECONDS="${JAZZMINE_REDIS_WAIT:-30}"

answers() {
  command -v redis-cli >/dev/null 2>&1 && [ "$(redis-cli -u "$URL" ping 2>/dev/null)" = "PONG" ]
}

if answers; then
  echo "ensure-redis: Redis already answering at $URL"
  exit 0
fi

install_missing ensure-redis redis-server redis-server

# Only a loopback URL is ours to start; any other Redis is the operator's to run.
hostport="${URL#redis://}"
hostport="${hostport#*@}"
hostport="${hostport%%/*}"
host="${hostport%%:*}"
port="${hostport##*:}"
[ "$port" = "$hostport" ] && port=6379
case "$host" in
  127.0.0.1|localhost) ;;
  *) echo "ensure-redis: nothing answers at $URL and it is not on loopback" >&2; exit 1 ;;
esac

dir="$(realpath -m "${JAZZMINE_VAR_DIR:-var}")/redis"  # absolute: redis-server changes into it first
mkdir -p "$dir"
echo "ensure-redis: starting redis-server on 127.0.0.1:$port (log: $dir/redis.log)"
# The queue is rebuilt from the database (the reaper queues again what was never claimed),
# so Redis keeps nothing on disk.
redis-server --bind 127.0.0.1 --port "$port" --daemonize yes --dir "$dir" \
  --logfile "$dir/redis.log" --pidfile "$dir/redis.pid" --save "" --appendonly no >/dev/null

for _ in $(seq 1 "$WAIT_SECONDS"); do
  if answers; then
    echo "ensure-redis: Redis ready"
    exit 0
  fi
  sleep 1
done
echo "ensure-redis: Redis did not answer within ${WAIT_SECONDS}s" >&2
exit 1
