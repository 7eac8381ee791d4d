"""While a tool with a secret of its own runs, no thread or process of the script runs.

What such a call spawns carries the secret in its environment, and any process of the same
uid reads `/proc/<pid>/environ`. A script that got past the validator (full builtins here)
polls every process's environment, from a thread and from a forked process of its own, before,
during and after a call whose program lives 0.6 s: it must find nothing, and both pollers must
have run before and after the call (freeze.py). As a plain process the harness runs as root,
which may read any environment, so there only the pausing stands between the script and the
secret; under bubblewrap the sandbox's own walls stand too.
"""

from __future__ import annotations

import hashlib
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jazzmine.core.tools import SandboxConfig, ToolRegistry, ToolResponse
from jazzmine.sandbox import Outcome, RunLimits, RunRequest, SandboxBuilder

from .bwrap_support import requires_bwrap
from .helpers import collect, final, harness_events

SANDBOX = "paused-script"
SECRET = "slow-" + secrets.token_hex(12)
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()


def slow_secret_call() -> ToolResponse:
    """Run a program that holds the tool's secret in its environment for 0.6 s."""
    import subprocess
    import sys

    subprocess.run([sys.executable, "-c", "import time; time.sleep(0.6)"], check=True)
    return ToolResponse(success=True, data="done")


SCRIPT = """
import hashlib, os, threading, time

DIGEST = "DIGEST_HERE"


def hits():
    found = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                items = handle.read().split(b"\\0")
        except OSError:
            continue
        for item in items:
            name, _, value = item.partition(b"=")
            found += name == b"SLOW_TOKEN" and hashlib.sha256(value).hexdigest() == DIGEST
    return found


state = {"ticks": 0, "found": 0, "stop": False}


def poll():
    while not state["stop"]:
        state["ticks"] += 1
        state["found"] += hits()


reader, writer = os.pipe()
child = os.fork()
if child == 0:  # a process of its own polling the same way, until 2 s have passed
    os.close(reader)
    end, ticks, found = time.monotonic() + 2.0, 0, 0
    while time.monotonic() < end:
        ticks += 1
        found += hits()
    os.write(writer, f"{ticks} {found}".encode())
    os._exit(0)
os.close(writer)
thread = threading.Thread(target=poll, daemon=True)
thread.start()
time.sleep(0.3)
before = state["ticks"]
response = slow_secret_call()
at_return = state["ticks"]
time.sleep(0.3)
after = state["ticks"]
state["stop"] = True
thread.join()
child_ticks, child_found = (int(x) for x in os.read(reader, 100).split())
os.waitpid(child, 0)
emit_result({"called": response.data, "before": before, "at_return": at_return, "after": after,
             "found": state["found"], "child_ticks": child_ticks, "child_found": child_found})
""".replace("DIGEST_HERE", DIGEST)


def registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX))
    registry.register_function(slow_secret_call, description=slow_secret_call.__doc__,
                               parameters=[], dependencies=[], secrets=["SLOW_TOKEN"],
                               sandbox=SANDBOX)  # fmt: skip
    return registry


def request() -> RunRequest:
    return RunRequest(
        script=SCRIPT,
        secrets={"SLOW_TOKEN": SECRET},
        tool_secrets={"slow_secret_call": frozenset({"SLOW_TOKEN"})},
        unrestricted=True,
    )


@pytest.fixture(scope="module")
def runtime() -> Iterator[Path]:
    # Outside pytest's 0700 tmp tree: under bubblewrap as root the sandbox runs as nobody.
    root = Path(tempfile.mkdtemp(prefix="jazzmine-suite-paused-"))
    root.chmod(0o755)
    SandboxBuilder(registry(), cache_dir=root / "cache").stage(SANDBOX, root / "runtime")
    yield root / "runtime"
    shutil.rmtree(root, ignore_errors=True)


def assert_paused(report: dict) -> None:
    assert report["called"] == "done", report
    assert report["found"] == 0 and report["child_found"] == 0, report
    # Both pollers ran (the thread before the call and after it; the process all along).
    assert report["before"] > 0 and report["after"] > report["at_return"], report
    assert report["child_ticks"] > 1, report


def test_as_a_plain_process_nothing_of_the_script_runs_during_the_call(runtime: Path) -> None:
    events = harness_events(runtime, request().to_line(30.0), unrestricted=True)
    (report,) = [e["data"] for e in events if e["type"] == "result"]
    assert_paused(report)


LIMITS = RunLimits(memory_mb=256, pids_limit=64, timeout_seconds=20)


async def report_of(runner: Any, asked: RunRequest) -> dict:
    """Run a request through a sandbox runner; return its result, which it must reach."""
    events = await collect(runner.run(asked))
    assert final(events).outcome is Outcome.RESULT, events
    (report,) = [e.data for e in events if e.type == "result"]
    return report


@requires_bwrap
async def test_under_bubblewrap_nothing_of_the_script_runs_during_the_call(runtime: Path) -> None:
    from jazzmine.sandbox.bwrap import BwrapRunner

    runner = BwrapRunner(allow_unrestricted=True).bind(runtime, LIMITS)
    assert_paused(await report_of(runner, request()))


# A script can undo the pause: a stopped process goes on at any SIGCONT, and a POSIX timer
# armed before the call has the kernel send it one every 20 ms. Then its poller runs during
# the call, and what keeps the secret is the script's Landlock domain (domain.py): the kernel
# refuses it the environment of every process outside it. Not as a plain process: root on
# the host holds CAP_SYS_PTRACE, which reads any environment, domain or not (a sandbox's
# process holds no capability).
WAKE = """
import ctypes, signal


class SigEvent(ctypes.Structure):
    _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int), ("notify", ctypes.c_int),
                ("pad", ctypes.c_byte * 48)]


class TimeSpec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]


class ITimerSpec(ctypes.Structure):
    _fields_ = [("interval", TimeSpec), ("value", TimeSpec)]


libc = ctypes.CDLL(None, use_errno=True)
event = SigEvent(signo=signal.SIGCONT, notify=0)  # SIGEV_SIGNAL
timer = ctypes.c_void_p()
armed = libc.timer_create(1, ctypes.byref(event), ctypes.byref(timer))
every = TimeSpec(0, 20_000_000)
armed = armed or libc.timer_settime(timer, 0, ctypes.byref(ITimerSpec(every, every)), None)
"""
WAKING_SCRIPT = SCRIPT.replace(
    "response = slow_secret_call()", WAKE + "response = slow_secret_call()"
).replace('emit_result({"called"', 'emit_result({"armed": armed, "called"')


def waking_request() -> RunRequest:
    return RunRequest(
        script=WAKING_SCRIPT,
        secrets={"SLOW_TOKEN": SECRET},
        tool_secrets={"slow_secret_call": frozenset({"SLOW_TOKEN"})},
        unrestricted=True,
    )


def assert_woke_and_found_nothing(report: dict) -> None:
    assert report["armed"] == 0 and report["called"] == "done", report
    # The timer undid the pause: the poller ran while the secret's program lived.
    assert report["at_return"] - report["before"] >= 5, report
    assert report["found"] == 0 and report["child_found"] == 0, report


@requires_bwrap
async def test_under_bubblewrap_a_script_that_wakes_itself_reads_no_secret(runtime: Path) -> None:
    from jazzmine.sandbox.bwrap import BwrapRunner

    runner = BwrapRunner(allow_unrestricted=True).bind(runtime, LIMITS)
    assert_woke_and_found_nothing(await report_of(runner, waking_request()))


@pytest.fixture(scope="module")
def paused_image(docker_client, runtime: Path) -> str:
    builder = SandboxBuilder(registry(), client=docker_client, cache_dir=runtime.parent / "cache")
    return builder.ensure_image(SANDBOX).tag


@pytest.mark.docker
async def test_in_a_container_a_script_that_wakes_itself_reads_no_secret(
    hostile_runner, paused_image
) -> None:
    runner = hostile_runner.bind(paused_image, LIMITS)
    assert_woke_and_found_nothing(await report_of(runner, waking_request()))
