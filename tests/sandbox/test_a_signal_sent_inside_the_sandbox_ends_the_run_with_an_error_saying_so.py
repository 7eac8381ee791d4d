"""A signal a tool sends inside the sandbox never stops the relay; the run says what happened.

The relay is pid 1, which the kernel spares every signal it has no handler for, but Python
installs one for SIGINT: a tool sending SIGINT to its process group (or to pid 1) raised
KeyboardInterrupt in the relay, and the run ended as a crashed container. A SIGTERM, SIGHUP,
SIGQUIT or SIGUSR1 to the group killed the worker, and the relay, seeing it end without a
word, left as if the container had crashed too. A SIGINT to the worker alone raised
KeyboardInterrupt wherever it was (in the harness as well), which the tool's call turned into
a failed response the script went on after, to a result.

Now the relay ignores every signal it can, the worker dies of any SIGINT, and the relay ends
the run with an error naming the signal; whatever the worker sent before, the run does not
end with a result.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolRegistry, validate_script
from jazzmine.sandbox import Event, Outcome, RunLimits

from .both_backends import Sandbox, bwrap_runtime, docker_image, sandbox
from .helpers import final, of_type

__all__ = ["sandbox"]  # the fixture, used by name

SANDBOX = "signal-tests"
LIMITS = RunLimits(memory_mb=256, pids_limit=32, timeout_seconds=15)

# A tool that sends a signal from its own process (the worker) or from a child it starts.
# "group" is the sender's process group: the relay's, which the worker and the child share.
SEND_SIGNAL = '''
def send_signal(name: str, target: str, through: str) -> ToolResponse:
    """Send signal `name` to `target`, from this process or from a child it starts."""
    import os
    import signal
    import subprocess
    import sys
    import time

    number = int(getattr(signal, name))
    pid = {"relay": 1, "group": 0, "worker": os.getpid(), "everyone": -1}[target]
    if through == "child":
        code = f"import os; os.kill({pid}, {number})"
        subprocess.run([sys.executable, "-c", code], check=False)
    else:
        os.kill(pid, number)
    time.sleep(0.3)  # time for the signal to act on whoever it reached
    return ToolResponse(success=True, data="still here")
'''

SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1"]


def make_registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX))
    texts = [ToolParameter(n, "str") for n in ("name", "target", "through")]
    registry.register_source(
        SEND_SIGNAL, sandbox=SANDBOX, description="Send a signal.", parameters=texts
    )
    return registry


@pytest.fixture(scope="module")
def image(docker_client, base_image, tmp_path_factory) -> str:
    return docker_image(docker_client, make_registry(), SANDBOX, tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def runtime_dir() -> Iterator[Path]:
    yield from bwrap_runtime(make_registry(), SANDBOX)


async def run(sandbox: Sandbox, script: str) -> list[Event]:
    assert validate_script(script, make_registry().tool_names(SANDBOX)) == []
    return await sandbox.run(script, LIMITS)


def assert_stopped_by(events: list[Event], name: str) -> None:
    """The run ended as a script error that names the signal, without a crash or a result."""
    end = final(events)
    assert end.outcome is Outcome.SCRIPT_ERROR, events
    (error,) = of_type(events, "error")
    assert error.data["exception"] == "ScriptStopped", error
    assert f"stopped by signal {name} (" in error.data["message"], error


@pytest.mark.parametrize("name", SIGNALS)
async def test_a_signal_to_the_relay_leaves_it_and_the_run_as_they_were(sandbox, name):
    events = await run(sandbox, f"emit_result(send_signal({name!r}, 'relay', 'self').data)\n")
    assert final(events).outcome is Outcome.RESULT, events
    assert of_type(events, "result")[0].data == "still here"


@pytest.mark.parametrize("name", SIGNALS)
@pytest.mark.parametrize("target", ["group", "worker"])
async def test_a_signal_to_the_group_or_the_worker_ends_the_run_naming_it(sandbox, name, target):
    events = await run(sandbox, f"emit_result(send_signal({name!r}, {target!r}, 'self').data)\n")
    assert_stopped_by(events, name)
    assert of_type(events, "result") == []


@pytest.mark.parametrize(
    ("name", "target"),
    [("SIGINT", "relay"), ("SIGINT", "group"), ("SIGTERM", "worker"), ("SIGHUP", "everyone")],
)
async def test_a_signal_from_a_process_a_tool_started_is_no_different(sandbox, name, target):
    events = await run(sandbox, f"emit_result(send_signal({name!r}, {target!r}, 'child').data)\n")
    if target == "relay":
        assert of_type(events, "result")[0].data == "still here", events
    else:
        assert_stopped_by(events, name)


async def test_a_result_emitted_before_the_signal_does_not_end_the_run(sandbox):
    events = await run(sandbox, "emit_result('early')\nsend_signal('SIGINT', 'group', 'self')\n")
    assert of_type(events, "result")[0].data == "early"  # handed on, as every event is
    assert_stopped_by(events, "SIGINT")
