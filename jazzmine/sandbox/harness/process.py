"""The two processes' plumbing: non-dumpable processes, forking the worker, reading its pipe."""

from __future__ import annotations

import ctypes
import os
import select
import signal
import traceback
from collections.abc import Callable
from typing import Any

from .protocol import MAX_LINE_BYTES, clean_text
from .reaper import become_subreaper
from .refs import _json_loads, _os_read

PR_SET_DUMPABLE = 4


def no_dump() -> None:
    """Make this process non-dumpable so same-uid processes cannot read its memory or environ."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        # Fail closed: a harness whose memory a tool could read must not run anything.
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def seccomp_load(program: bytes) -> None:
    """Load a seccomp filter (BPF) for this process and every process it starts from now on.

    It stacks on any filter loaded before (the engine's): a call must pass both. Raises if it
    cannot: a sandbox asked for a filter must not run without it.
    """
    if not program or len(program) % 8:
        raise ValueError("a seccomp filter is a whole number of 8-byte BPF instructions")
    code = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(code, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    zero = ctypes.c_ulong(0)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), zero, zero, zero) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    mode = ctypes.c_ulong(SECCOMP_MODE_FILTER)
    if libc.prctl(PR_SET_SECCOMP, mode, ctypes.byref(fprog), zero, zero) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


# Every signal a process can ignore, but SIGCHLD: ignored, it would have the kernel reap the
# worker before the relay could read how it ended.
_IGNORABLE: frozenset[int] = frozenset(signal.valid_signals()) - {
    signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD,
}  # fmt: skip
# What Python itself ignores in every program it starts: a closed pipe or the file size
# limit is an OSError to handle then, not the end of the process.
_IGNORED_BY_PYTHON: frozenset[int] = frozenset({signal.SIGPIPE, signal.SIGXFSZ})


def ignore_signals() -> None:
    """Ignore every signal another process of the sandbox could stop this one with.

    The relay is pid 1, which the kernel spares the signals it has no handler for; but Python
    installs one for SIGINT, so a tool sending SIGINT to its process group (or to pid 1)
    raised KeyboardInterrupt in the relay and the run ended as a crashed sandbox. Ignored,
    every such signal leaves the relay as it was, pid 1 or not; the host stops a sandbox
    with SIGKILL, which nothing ignores.
    """
    for number in _IGNORABLE:
        signal.signal(number, signal.SIG_IGN)


def worker_signals() -> None:
    """Give a forked worker Python's start-up dispositions, but SIGINT at its default.

    Ignored signals stay ignored across exec, so the relay's would reach every program a tool
    starts. And a SIGINT kills the worker rather than raising KeyboardInterrupt wherever it
    happens to be, inside the harness too: between a tool's end and the restoring of the
    environment its secrets were set in, say, or turned into a tool's failed response the
    script goes on after. The relay reports the signal (`Relay.finish`).
    """
    for number in _IGNORABLE:
        disposition = signal.SIG_IGN if number in _IGNORED_BY_PYTHON else signal.SIG_DFL
        signal.signal(number, disposition)


def take_host_channel() -> tuple[int, int]:
    """Make this process non-dumpable and return private copies of its stdout and stdin.

    The copies are non-inheritable, so only this process holds them; fd 1 itself then points
    at stderr so nothing written there (by this process, a tool or a child) reaches the host.
    No signal from inside the sandbox stops the process that holds them (`ignore_signals`).
    """
    no_dump()
    ignore_signals()
    out_fd = os.dup(1)
    os.set_inheritable(out_fd, False)
    os.dup2(2, 1)
    in_fd = os.dup(0)
    os.set_inheritable(in_fd, False)
    return out_fd, in_fd


def read_line(fd: int) -> bytes:
    """Read one line from a raw fd without a buffered reader a script could reach."""
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        if b"\n" in chunk:
            break
    return b"".join(chunks)


class Worker:
    """A forked process that will run untrusted code, and the relay's ends of its pipes."""

    def __init__(self, pid: int, events: int, requests: int, token: bytes) -> None:
        self.pid = pid
        self.events = events
        self.requests = requests
        self.token = token
        self.status: int | None = None  # the raw wait status, once reaped


def fork_worker(body: Callable[[int, int, bytes], None], keep: tuple[int, ...] = ()) -> Worker:
    """Fork a worker running `body(request_fd, event_fd, token)`; it never returns here.

    Every descriptor in `keep` (the host channel, the real stdin) is closed in the worker
    before any of its code runs, so nothing in it can write to the host directly.
    """
    token = os.urandom(16).hex().encode("ascii")
    request_r, request_w = os.pipe()
    event_r, event_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            worker_signals()
            for fd in (*keep, request_w, event_r):
                os.close(fd)
            no_dump()  # inherited already; said again so the worker never depends on it
            become_subreaper()  # what tools start stays below the worker (reaper.py)
            body(request_r, event_w, token)
        except BaseException:
            traceback.print_exc()
            os._exit(70)
        os._exit(0)
    os.close(request_r)
    os.close(event_w)
    return Worker(pid, event_r, request_w, token)


def worker_lines(worker: Worker, limit: int = MAX_LINE_BYTES) -> Any:
    """Yield (payload or None, refused text) for each line the worker writes, until it ends.

    A line that does not carry the worker's token (a tool writing blindly to descriptors)
    is refused, never interpreted; an endless line ends the worker.
    """
    prefix = worker.token + b" "
    pending = b""
    while True:
        readable, _, _ = select.select([worker.events], [], [], 0.2)
        if not readable:
            # Quiet: a worker that died while a grandchild keeps the pipe open must not hang us.
            pid, _status = os.waitpid(worker.pid, os.WNOHANG)
            if pid == 0:
                continue
            worker.status = _status
            return
        chunk = _os_read(worker.events, 1 << 16)
        if not chunk:
            return
        pending += chunk
        if b"\n" not in chunk:
            if len(pending) > limit:
                os.kill(worker.pid, 9)
                yield None, f"a line of more than {limit} bytes"
                return
            continue
        *lines, pending = pending.split(b"\n")
        for line in lines:
            at = line.find(prefix)
            if at < 0:
                yield None, _excerpt(line)
                continue
            if at > 0:
                yield None, _excerpt(line[:at])
            try:
                payload = _json_loads(line[at + len(prefix) :], parse_constant=_refuse_constant)
            except (ValueError, RecursionError) as exc:
                yield None, f"an unreadable line ({exc})"
                continue
            yield payload, ""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _excerpt(raw: bytes) -> str:
    text = raw[:120].decode("utf-8", "replace")
    return clean_text(text) + ("..." if len(raw) > 120 else "")


def worker_status(worker: Worker) -> int:
    """Wait for the worker to end and return its raw wait status."""
    status = worker.status
    if status is None:
        _pid, status = os.waitpid(worker.pid, 0)
    return status


def describe_status(status: int) -> str:
    """Say in words how a worker ended."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        hint = "; out of memory?" if number == signal.SIGKILL else ""
        return f"killed by signal {number}: {signal_name(number)}{hint}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def sent_signal(status: int) -> int | None:
    """Return the signal that ended a worker, unless none did or it may be the OOM killer's.

    The kernel ends a process out of memory with SIGKILL, which the relay cannot tell from
    any other SIGKILL; the host can (the engine's or the cgroup's OOM record). Every other
    signal was sent from inside the sandbox, or is the worker's own crash.
    """
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL:
        return os.WTERMSIG(status)
    return None


def signal_name(number: int) -> str:
    """Name a signal for people: "SIGINT (Interrupt)"."""
    try:
        name = signal.Signals(number).name
    except ValueError:  # real-time signals but the first and the last have no name
        realtime = signal.SIGRTMIN <= number <= signal.SIGRTMAX
        name = f"SIGRTMIN+{number - signal.SIGRTMIN}" if realtime else f"signal {number}"
    text = signal.strsignal(number)
    return f"{name} ({text})" if text else name


def mirror_status(status: int) -> int:
    """Return the exit code that tells the host how the worker ended."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    code = os.waitstatus_to_exitcode(status)
    return code if code != 0 else 70
