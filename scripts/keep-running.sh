#!/usr/bin/env bash
# Run a command, and start it again whenever it ends other than by a stop asked of this script.
#
# `scripts/run.sh` runs web, worker and beat under honcho, which stops all of them as soon as
# one ends: a worker killed by the kernel's OOM killer (or any crash) took the web pages down
# with it. Each Procfile line runs under this instead. honcho's stop (SIGTERM to the whole
# process group, on Ctrl-C) reaches the command directly, which drains and exits as it
# always did; this script then exits with it. A command that keeps dying at once is started
# again after a growing pause (1 s, doubled up to 30 s), as a supervisor would.
set -u
stopping=0
trap 'stopping=1' TERM INT
pause=1
while :; do
  started=$SECONDS
  "$@" &
  child=$!
  wait "$child"
  rc=$?
  # A stop trapped here ends `wait` (with 128 + its number) before the command has ended:
  # wait again for the command's own end and status (none to read: it was collected already).
  while (( rc > 128 )) && [ "$stopping" = 1 ]; do
    wait "$child"
    next=$?
    (( next == 127 || next < 0 || next > 255 )) && break
    rc=$next
  done
  if [ "$stopping" = 1 ]; then
    exit "$rc"
  fi
  if (( SECONDS - started >= 30 )); then
    pause=1
  fi
  echo "keep-running: '$1' ended (exit $rc); starting it again in ${pause} s" >&2
  sleep "$pause" &
  wait $! || true
  if [ "$stopping" = 1 ]; then
    exit "$rc"
  fi
  pause=$(( pause * 2 > 30 ? 30 : pause * 2 ))
done
