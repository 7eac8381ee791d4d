"""While a tool with secrets of its own is called, nothing of the script runs.

Its process holds its secrets where no other process reads them (isolation.py), but what a
call spawns is a plain program: it carries the secret in its environment, and a process of
the same uid reads `/proc/<pid>/environ` of a program it did not start. A script that got past
the validator could poll for such programs from a thread or a process of its own while the
call runs. So the tool's process stops every process of the sandbox but the relay and the
tools' own processes (with what they started) before the call, makes sure each has stopped,
and lets them go on after it. SIGSTOP cannot be caught, blocked or ignored.

"Every process of the sandbox": everything below the relay, which is a child subreaper, so
that no process the script starts (a double fork, a `CLONE_PARENT` clone) ends up elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

from .reaper import descendants

# How long a process may take to stop (one in uninterruptible sleep stops when it wakes);
# past it the call is not made, as nothing is sure.
STOP_SECONDS = 1.0
_MAX_ROUNDS = 10_000


def freeze(root: int, spared: frozenset[int]) -> list[int] | None:
    """Stop every process below `root` but the subtrees of `spared`; None if not all stopped.

    Returns the stopped pids, for `thaw`. On None, whatever was stopped is let go again.
    """
    stopped: list[int] = []
    seen: set[int] = set()
    for _round in range(_MAX_ROUNDS):
        fresh = [pid for pid in descendants(root, spared) if pid not in seen]
        if not fresh:
            break
        for pid in fresh:
            seen.add(pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
        # A process that was forking as it was stopped shows its child in the next round.
    else:
        thaw(stopped)
        return None
    deadline = time.monotonic() + STOP_SECONDS
    waiting = list(stopped)
    while waiting:
        waiting = [pid for pid in waiting if not _has_stopped(pid)]
        if waiting and time.monotonic() > deadline:
            thaw(stopped)
            return None
        for pid in waiting:
            # A SIGCONT came after the SIGSTOP (a script's own timer sends one every few ms):
            # stop it again. Seen once, it was never seen stopped on a busy machine, and the
            # call failed for a script whose walls (its Landlock domain) hold anyway.
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        if waiting:
            time.sleep(0.0002)
    return stopped


def thaw(pids: list[int]) -> None:
    """Let the processes `freeze` stopped go on."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def _has_stopped(pid: int) -> bool:
    """Tell whether every thread of `pid` has stopped (or the process is gone)."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True  # ended: nothing of it runs
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue  # that thread ended
        state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
        if state not in (b"T", b"t", b"Z", b"X"):
            return False
    return True
