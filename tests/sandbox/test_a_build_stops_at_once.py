"""A build's helper commands (pip, the base image's script) and the engine's step running now
stop the moment they are told to.

Before, a build was stopped only at its next log line: a download that printed nothing for
minutes (a large wheel, a stalled index) kept a stopping worker waiting until its supervisor
killed it, and pip, in no way tied to the worker, went on downloading after it. So did the
image's RUN step, which compiles the runtime and is silent for tens of seconds with a large
dependency: the stop now kills the step's container, which the engine names in the log.
"""

from __future__ import annotations

import sys
import threading
import time
import uuid

import docker
import pytest

from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.interrupts import Interrupt, WorkInterrupted
from jazzmine.sandbox import SandboxBuilder
from jazzmine.sandbox.commands import run_logged
from jazzmine.sandbox.errors import BuildError
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


def _builder(docker_client) -> SandboxBuilder:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name="silent"))
    return SandboxBuilder(registry, client=docker_client)


def _build_in_thread(builder, context, tag, interrupt, lines):
    outcome: dict[str, BaseException | None] = {}

    def build() -> None:
        try:
            builder._docker_build(context, tag, "silent", lines.append, interrupt)
            outcome["error"] = None
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=build)
    thread.start()
    return thread, outcome


def _exists(docker_client, container_id: str) -> bool:
    try:
        docker_client.containers.get(container_id)
    except docker.errors.NotFound:
        return False
    return True


@pytest.mark.docker
def test_a_silent_engine_step_is_killed_when_the_build_is_stopped(
    docker_client, base_image, tmp_path
):
    (tmp_path / "Dockerfile").write_text(f"FROM {base_image}\nRUN sleep 60 && echo never\n")
    tag = f"jazzmine/sandbox-silent:stop-{time.time_ns()}"
    interrupt, lines = Interrupt(), []
    thread, outcome = _build_in_thread(_builder(docker_client), tmp_path, tag, interrupt, lines)
    wait_until(lambda: any("Running in" in line for line in lines), timeout=60,
               message="the step never started")  # fmt: skip
    time.sleep(1.0)  # silent now: nothing to check the switch between
    fired = time.monotonic()
    interrupt.fire(REASON)
    thread.join(15)
    assert not thread.is_alive()
    assert time.monotonic() - fired < 5, "the build waited for its silent step"
    assert isinstance(outcome["error"], WorkInterrupted), outcome["error"]
    assert str(outcome["error"]) == REASON
    with pytest.raises(docker.errors.ImageNotFound):
        docker_client.images.get(tag)
    # The engine removes the killed step's container (forcerm): nothing keeps running.
    (named,) = [line.split()[-1] for line in lines if "Running in" in line]
    wait_until(lambda: not _exists(docker_client, named), timeout=10,
               message="the step's container outlived the stop")  # fmt: skip


@pytest.mark.docker
def test_a_stop_fired_before_the_engine_step_started_kills_it_as_soon_as_it_is_named(
    docker_client, base_image, tmp_path
):
    (tmp_path / "Dockerfile").write_text(f"FROM {base_image}\nRUN sleep 60\n")
    tag = f"jazzmine/sandbox-silent:early-{time.time_ns()}"
    interrupt = Interrupt()
    interrupt.fire("stopped early")
    lines: list[str] = []
    started = time.monotonic()
    with pytest.raises(WorkInterrupted):
        _builder(docker_client)._docker_build(tmp_path, tag, "silent", lines.append, interrupt)
    assert time.monotonic() - started < 10


@pytest.mark.docker
def test_an_engine_step_that_fails_by_itself_is_still_a_build_error(
    docker_client, base_image, tmp_path
):
    (tmp_path / "Dockerfile").write_text(f"FROM {base_image}\nRUN exit 3\n")
    tag = f"jazzmine/sandbox-silent:fails-{time.time_ns()}"
    with pytest.raises(BuildError, match="non-zero code: 3"):
        _builder(docker_client)._docker_build(tmp_path, tag, "silent", lambda _l: None, Interrupt())
