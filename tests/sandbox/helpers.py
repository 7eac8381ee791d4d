"""Small helpers shared by the sandbox tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

from jazzmine.sandbox import Event
from jazzmine.sandbox.harness import SHARED_MACHINE_ENV, UNRESTRICTED_ENV
from jazzmine.sandbox.workdirs import ABANDONED_AFTER_SECONDS

# What code in a sandbox tries first to reach past the network namespace: io_uring (its own
# syscalls, which seccomp filters do not see one by one) and a vsock socket (the hypervisor's).
# Leaves `seen`: {'io_uring': 'ok' or the errno's name, 'vsock': the same}.
IO_URING_VSOCK_PROBE = """
import ctypes, errno, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
params = ctypes.create_string_buffer(120)
ctypes.set_errno(0)
ring = libc.syscall(425, 4, params)  # io_uring_setup on x86_64
seen = {'io_uring': 'ok' if ring >= 0 else errno.errorcode[ctypes.get_errno()]}
try:
    socket.socket(40, socket.SOCK_STREAM).close()  # AF_VSOCK; nothing is connected to
    seen['vsock'] = 'ok'
except OSError as exc:
    seen['vsock'] = errno.errorcode.get(exc.errno, str(exc.errno))
"""


async def collect(events: AsyncIterator[Event]) -> list[Event]:
    """Drain a run and return its events."""
    return [event async for event in events]


def final(events: list[Event]) -> Event:
    """Return the exit event, checking that it is last and unique."""
    assert [e.type for e in events].count("exit") == 1, events
    assert events[-1].type == "exit", events
    return events[-1]


def of_type(events: list[Event], type_: str) -> list[Event]:
    return [e for e in events if e.type == type_]


def aged(path: Path, *, follow_symlinks: bool = True) -> None:
    """Date a working directory back past the age at which an unheld one counts as abandoned."""
    then = time.time() - ABANDONED_AFTER_SECONDS - 60
    os.utime(path, (then, then), follow_symlinks=follow_symlinks)


DELETE = object()  # `with_request(..., key=DELETE)` takes the key out


def with_request(line: bytes, **changes: object) -> bytes:
    """Return what the host sends the harness (`RunRequest.to_line`) with its request changed.

    The tools' own secrets (the second line) are kept as they are.
    """
    request, own = line.decode().splitlines()
    payload = json.loads(request)
    for key, value in changes.items():
        if value is DELETE:
            payload.pop(key, None)
        else:
            payload[key] = value
    return (json.dumps(payload) + "\n" + own + "\n").encode()


def harness_events(runtime: Path, line: bytes, *, unrestricted: bool = False) -> list[dict]:
    """Run one request line through the harness as a plain subprocess; return its events.

    No container: the harness's own walls (guards, builtins, audit hook, tool scopes) alone.
    `unrestricted` lets a request with `unrestricted: true` run with full builtins, as a
    script past the validator would.
    """
    env = {"PATH": os.environ["PATH"], SHARED_MACHINE_ENV: "1"}
    if unrestricted:
        env[UNRESTRICTED_ENV] = "1"
    done = subprocess.run(
        [sys.executable, "-I", str(runtime / "harness.py"), str(runtime)],
        input=line, capture_output=True, timeout=60, check=False, env=env,
    )  # fmt: skip
    lines = [json.loads(x) for x in done.stdout.decode().splitlines()]
    assert lines[0]["type"] == "ready" and lines[-1]["type"] == "exit", done.stderr
    return lines[1:]
