"""The pause before a tool's call holds against a process that is woken again and again.

A script can arm a timer that sends it SIGCONT every 20 ms (test_nothing_of_the_script_runs...).
The pause sent SIGSTOP once, then waited to see each process stopped: on a busy machine the
first look came after a SIGCONT, the process ran on, and after a second the call was refused
("could not all be paused"), as CI saw. Each look now stops again what it finds running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from jazzmine.sandbox.harness import freeze as freezing

# A root whose child spins; a waker, outside the root, sends the child SIGCONT every 20 ms.
ROOT = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
    "print(child.pid, flush=True)\n"
    "time.sleep(60)\n"
)
WAKER = (
    "import os, signal, sys, time\n"
    "while True:\n"
    "    os.kill(int(sys.argv[1]), signal.SIGCONT)\n"
    "    time.sleep(0.02)\n"
)


@pytest.fixture
def woken() -> Iterator[tuple[int, int]]:
    root = subprocess.Popen([sys.executable, "-c", ROOT], stdout=subprocess.PIPE, text=True)
    assert root.stdout is not None
    child = int(root.stdout.readline())
    waker = subprocess.Popen([sys.executable, "-c", WAKER, str(child)])
    try:
        yield root.pid, child
    finally:
        waker.kill()
        waker.wait()
        os.kill(child, signal.SIGKILL)
        root.kill()
        root.wait()


def test_a_process_woken_after_its_stop_is_stopped_again(woken, monkeypatch) -> None:
    root, child = woken
    seen = freezing._has_stopped
    looked: list[float] = []

    def busy_look(pid: int) -> bool:
        if not looked:
            time.sleep(0.05)  # a busy machine: the waker's SIGCONT comes before the first look
        looked.append(time.monotonic())
        return seen(pid)

    monkeypatch.setattr(freezing, "_has_stopped", busy_look)
    started = time.monotonic()
    stopped = freezing.freeze(root, frozenset())
    try:
        assert stopped == [child], "the call would be refused: the process was not paused"
        assert time.monotonic() - started < freezing.STOP_SECONDS
    finally:
        freezing.thaw(stopped or [child])
