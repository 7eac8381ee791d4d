"""No process a tool starts outlives the tool's call.

A script tool runs as a child process, and what it starts may live on: `setsid` and a double
fork leave a process that `subprocess.run` no longer waits for. Left alone, it would watch the
next tool's processes (`/proc/<pid>/environ` of the same uid) and read the secrets they are
handed. The worker is therefore a child subreaper, so every such orphan stays its descendant,
and each tool call ends by killing and reaping whatever is left below it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal

PR_SET_CHILD_SUBREAPER = 36
# Enough rounds for any tree the pids limit allows: each round kills every direct child, and
# the grandchildren they leave come to this process for the next.
_MAX_ROUNDS = 10_000
# Children that are not a tool's leftovers: the processes of tools with secrets of their own
# (isolation.py), which live as long as the run.
_SPARED: set[int] = set()


def spare(pid: int) -> None:
    """Never end child `pid` with what a tool call left."""
    _SPARED.add(pid)


def become_subreaper() -> None:
    """Make orphans of this process's descendants its children, not init's."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        # Fail closed: a worker that cannot find what its tools left must not run them.
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER, 1) failed")


def end_descendants() -> int:
    """SIGKILL and reap every process below this one; return how many there were."""
    me = os.getpid()
    ended = 0
    for _round in range(_MAX_ROUNDS):
        children = _children_of(me)
        if not children:
            return ended
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        ended += len(children)
    raise RuntimeError("processes a tool started could not all be ended")


def _children_of(parent: int) -> list[int]:
    """Return the pids whose parent is `parent` (zombies included: they are reaped too)."""
    return [pid for pid, ppid, _state in processes() if ppid == parent and pid not in _SPARED]


def processes() -> list[tuple[int, int, bytes]]:
    """Return every process this namespace shows: its pid, its parent's and its state."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue  # ended meanwhile
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the
        # last ")".
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            found.append((int(name), int(fields[1]), fields[0]))
    return found


def end_descendants_of(root: int) -> None:
    """SIGKILL every live process below `root` (not `root` itself), until none is left.

    For the relay, whose worker is stopped meanwhile: what dies becomes the worker's zombie
    (it cannot reap it yet), so zombies count as gone. Only `root`'s tree is looked at, never
    the machine's, however the harness was started.
    """
    for _round in range(_MAX_ROUNDS):
        alive = descendants(root)
        if not alive:
            return
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    raise RuntimeError("processes the tools started could not all be ended")


def descendants(root: int, spared: frozenset[int] = frozenset()) -> list[int]:
    """Return the live (not zombie) processes below `root`, leaving out `spared` and all
    below them."""
    children: dict[int, list[int]] = {}
    live: set[int] = set()
    for pid, ppid, state in processes():
        children.setdefault(ppid, []).append(pid)
        if state not in (b"Z", b"X"):
            live.add(pid)
    found, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        if pid in spared:
            continue
        if pid in live:
            found.append(pid)
        stack.extend(children.get(pid, []))
    return found
