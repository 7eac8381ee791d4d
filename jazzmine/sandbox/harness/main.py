"""The relay process's run: fork the worker, announce readiness, relay one run and exit."""

from __future__ import annotations

import base64
import contextlib
import os
import select
import signal
import sys

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
from .reaper import end_descendants_of
from .refs import _os_write
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
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    worker = fork_worker(
        lambda request_fd, event_fd, token: run_worker(root, request_fd, event_fd, token),
        keep=(proto_fd, in_fd),
    )
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

    line = read_line(in_fd)
    if not line.strip():
        os.kill(worker.pid, 9)
        os._exit(0)  # the pool closed this idle sandbox: nothing to report
    # Going again before the request is written: a request longer than the pipe holds (64 KiB;
    # a script may be 200 000 characters) would wait for a reader that is stopped, for good.
    with contextlib.suppress(ProcessLookupError):
        os.kill(worker.pid, signal.SIGCONT)
    try:
        view = memoryview(line if line.endswith(b"\n") else line + b"\n")
        while view:
            view = view[_os_write(worker.requests, view) :]
    except OSError:
        pass  # the worker is gone; how it ended decides the run below
    os.close(worker.requests)
    del line, view
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
