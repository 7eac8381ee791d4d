"""A build's helper commands (pip, the base image's script) stop the moment they are told to.

Before, a build was stopped only at its next log line: a download that printed nothing for
minutes (a large wheel, a stalled index) kept a stopping worker waiting until its supervisor
killed it, and pip, in no way tied to the worker, went on downloading after it.
"""

from __future__ import annotations

import sys
import threading
import time
import uuid

import pytest

from jazzmine.interrupts import Interrupt, WorkInterrupted
from jazzmine.sandbox.commands import run_logged
from jazzmine.sandbox.wheels import PipIndexes, download_wheels
from tests.stalling import processes_naming, stalled_index
from tests.waiting import wait_until

REASON = "its worker w1 stopped before the build ended (after a grace of 2 s)"


def _fire_in(interrupt: Interrupt, seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, interrupt.fire, args=(REASON,))
    timer.start()
    return timer


def _silent_family(marker: str) -> list[str]:
    # A parent that forks a child, both silent for a minute: a killed parent alone would
    # leave the child running.
    code = "import os, time\nos.fork()\ntime.sleep(60)\n"
    return [sys.executable, "-c", code, marker]


def test_a_silent_command_and_its_children_are_killed_when_the_switch_fires():
    marker = f"jazzmine-silent-{uuid.uuid4().hex}"
    interrupt = Interrupt()
    _fire_in(interrupt, 0.5)
    started = time.monotonic()
    with pytest.raises(WorkInterrupted, match="stopped before the build ended"):
        run_logged(_silent_family(marker), lambda _line: None, interrupt=interrupt)
    assert time.monotonic() - started < 3
    wait_until(lambda: not processes_naming(marker), timeout=5, message="a child outlived it")


def test_a_switch_fired_before_the_command_starts_stops_it_at_once():
    marker = f"jazzmine-late-{uuid.uuid4().hex}"
    interrupt = Interrupt()
    interrupt.fire(REASON)
    started = time.monotonic()
    with pytest.raises(WorkInterrupted):
        run_logged(_silent_family(marker), lambda _line: None, interrupt=interrupt)
    assert time.monotonic() - started < 3
    wait_until(lambda: not processes_naming(marker), timeout=5, message="it kept running")


def test_a_line_handler_that_fails_takes_the_command_down_with_it():
    marker = f"jazzmine-told-{uuid.uuid4().hex}"
    code = "import time\nprint('one', flush=True)\ntime.sleep(60)\n"

    def refuse(line: str) -> None:
        raise RuntimeError(f"could not store {line!r}")

    with pytest.raises(RuntimeError, match="could not store 'one'"):
        run_logged([sys.executable, "-c", code, marker], refuse)
    wait_until(lambda: not processes_naming(marker), timeout=5, message="it kept running")


def test_a_command_left_alone_gives_every_line_and_its_exit_code():
    lines: list[str] = []
    code = "import sys\nsys.stdout.buffer.write(b'caf\\xe9\\n')\nprint('two')\nsys.exit(3)\n"
    interrupt = Interrupt()
    assert run_logged([sys.executable, "-c", code], lines.append, interrupt=interrupt) == 3
    assert lines == ["caf\ufffd", "two"]  # an odd byte is shown, not a failure of its own
    interrupt.fire(REASON)  # after the end: nothing of it is left to kill, nothing raised


def test_pip_waiting_on_a_stalled_index_is_killed_and_leaves_no_partial_download(tmp_path):
    package = f"jazzmine-stalled-{uuid.uuid4().hex[:12]}"
    lines: list[str] = []
    outcome: list[BaseException] = []
    interrupt = Interrupt()
    with stalled_index() as url:

        def download() -> None:
            try:
                download_wheels(
                    [f"{package}==1.0"], tmp_path, lines.append,
                    indexes=PipIndexes(index_url=url), interrupt=interrupt,
                )  # fmt: skip
            except BaseException as exc:  # the test reads it below
                outcome.append(exc)

        thread = threading.Thread(target=download, daemon=True)
        thread.start()
        wait_until(lambda: processes_naming(package), timeout=30, message="pip never started")
        time.sleep(1.0)  # pip is waiting on the index now, silent
        assert processes_naming(package), "pip ended by itself: the index did not stall it"
        asked = time.monotonic()
        interrupt.fire(REASON)
        thread.join(timeout=10)
        took = time.monotonic() - asked
    assert not thread.is_alive(), "the download was still waiting on the index 10 s later"
    assert took < 3, f"pip took {took:.1f} s to stop"
    assert len(outcome) == 1 and isinstance(outcome[0], WorkInterrupted), outcome
    assert str(outcome[0]) == REASON
    wait_until(lambda: not processes_naming(package), timeout=5, message="pip outlived it")
    wheels = tmp_path / "wheels"
    assert not wheels.exists() or list(wheels.iterdir()) == [], list(wheels.iterdir())
