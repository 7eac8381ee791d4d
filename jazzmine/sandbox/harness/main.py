"""The relay process's run: fork the worker, announce readiness, relay one run and exit."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import os
import select
import signal
import sys

from . import wire
from .process import (
    Worker,
    fork_worker,
    read_line,
    seccomp_load,
    take_host_channel,
    worker_lines,
    worker_status,
)
from .protocol import SECCOMP_ENV
from .reaper import become_subreaper, end_descendants_of
from .refs import _json_loads, _os_write
from .relay import Relay
from .worker import run_worker

LINGER_SECONDS = 2.0


def idle(worker: Worker) -> None:
    """Stop the ready worker, and end whatever its tools started, until the request comes.

    A pool keeps a ready sandbox for as long as its worker lives, with no deadline: a busy
    thread or process a tool's definition started as it loaded (its default values run then)
    burned the sandbox's whole CPU share all that time. Stopped, the worker's threads wait;
    nothing else may run meanwhile, so every process below it ends.
    """
    if worker.status is not None:
        return  # ended before it was ready, and reaped already
    with contextlib.suppress(ProcessLookupError):
        os.kill(worker.pid, signal.SIGSTOP)
    _pid, status = os.waitpid(worker.pid, os.WUNTRACED)
    if not os.WIFSTOPPED(status):
        worker.status = status  # it ended instead: how decides the run
        return
    end_descendants_of(worker.pid)


def read_rest(fd: int, rest: bytes) -> bytes:
    """Return the host's second line, the tools' own secrets: `rest` read on to its end.

    Empty when the host sent none (a harness fed one request by hand).
    """
    while b"\n" not in rest:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        rest += chunk
    return rest.partition(b"\n")[0]


# What the secrets pipe holds (the most Linux lets a process ask for): written without waiting
# for a reader, so the relay never stalls on a tool process that is not there to read.
SECRETS_PIPE_BYTES = 1 << 20


def hand_over_secrets(fd: int, line: bytes) -> str | None:
    """Write each tool's own secrets for its process, in the tools' order; return a problem.

    One message per tool, by name, sorted: the worker forks the tools' processes in the same
    order, each reading exactly one. Nothing is ever waited for: a message that does not fit
    the pipe is not sent (its tool runs without its secrets), and said.
    """
    if not line.strip():
        os.close(fd)
        return None  # none sent: a harness fed one request by hand
    try:
        given = _json_loads(line)
        by_tool = given.get("tool_secrets") if isinstance(given, dict) else None
        if not isinstance(by_tool, dict):
            raise ValueError("no tool_secrets object")
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, SECRETS_PIPE_BYTES)
        os.set_blocking(fd, False)
        data = b"".join(
            wire.frame({"tool": str(tool), "secrets": by_tool[tool]}) for tool in sorted(by_tool)
        )
        try:
            written = os.write(fd, data) if data else 0
        except BrokenPipeError:
            return None  # the worker forks no tool process (it closed the pipe): none to read
        if written < len(data):
            return "the tools' own secrets did not fit their pipe: those tools have none"
        return None
    except (ValueError, TypeError, BlockingIOError) as exc:
        return f"the tools' own secrets could not be handed over ({exc}): those tools have none"
    finally:
        os.close(fd)


def main(root: str) -> None:
    """Fork the worker for the runtime at `root`, announce readiness, relay one run and exit."""
    # First of all, and inherited by the worker, the tools and whatever they start. Taken out
    # of the environment: nothing after needs it.
    program = os.environ.pop(SECCOMP_ENV, None)
    if program is not None:
        seccomp_load(base64.b64decode(program, validate=True))
    # Only this process holds the host's channel; the worker forked below reads its request
    # from a pipe, never from the real stdin.
    proto_fd, in_fd = take_host_channel()
    # Whatever the script starts stays below the relay, however it is orphaned: a tool call
    # with secrets of its own stops all of it (freeze.py).
    become_subreaper()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    # The tools' own secrets go down a pipe of their own, read only by those tools' processes
    # (isolation.py); the worker holds its end without reading it.
    secrets_r, secrets_w = os.pipe()
    worker = fork_worker(
        lambda request_fd, event_fd, token: run_worker(
            root, request_fd, event_fd, token, secrets_r
        ),
        keep=(proto_fd, in_fd, secrets_w),
    )
    os.close(secrets_r)
    relay = Relay(proto_fd)
    lines = worker_lines(worker)
    tools: list[str] = []
    for payload, refused in lines:
        if payload is not None and payload.get("type") == "ready":
            tools = [str(t) for t in payload.get("tools") or []]
            break
        if refused:
            sys.stderr.write(f"harness: refused a line from the worker: {refused}\n")
    idle(worker)
    relay.ready(tools)

    line, _, rest = read_line(in_fd).partition(b"\n")
    if not line.strip():
        os.kill(worker.pid, 9)
        os._exit(0)  # the pool closed this idle sandbox: nothing to report
    # Going again before the request is written: a request longer than the pipe holds (64 KiB;
    # a script may be 200 000 characters) would wait for a reader that is stopped, for good.
    with contextlib.suppress(ProcessLookupError):
        os.kill(worker.pid, signal.SIGCONT)
    try:
        view = memoryview(line + b"\n")
        while view:
            view = view[_os_write(worker.requests, view) :]
    except OSError:
        pass  # the worker is gone; how it ended decides the run below
    os.close(worker.requests)
    del line, view
    own_secrets = read_rest(in_fd, rest)
    problem = hand_over_secrets(secrets_w, own_secrets)
    del own_secrets, rest
    if problem is not None:
        relay.note(problem)
    for payload, refused in lines:
        if payload is None:
            relay.note(
                f"refused a line on the event pipe that the harness did not write: {refused}"
            )
            continue
        relay.accept(payload)
    relay.finish(worker_status(worker))
    # Stay until the host stops the sandbox, which it does once it stored the run's end: a
    # container whose process exits on its own is torn down by the engine at once (network,
    # cgroup, mounts), on the CPU the host needs right then to store and send that end. The
    # host closing stdin or killing us ends the wait; so does a host that went away.
    select.select([in_fd], [], [], LINGER_SECONDS)
    os._exit(0)
