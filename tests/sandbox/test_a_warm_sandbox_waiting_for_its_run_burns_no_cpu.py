"""A warm sandbox waiting in its pool for a run uses no CPU, whatever its tools started.

A tool's definition runs as the sandbox starts (its default values), long before any run: the pool keeps its sandboxes
ready for as long as the worker lives, with no deadline. A member's tool (code runs before an
admin accepts it: only secrets wait for that) started a busy process or thread as it loaded,
and every idle sandbox of its pool burned its whole CPU share on the worker's host, for hours,
slowing every other run there. Now, once the tools are loaded, the relay stops the worker and
ends every process below it until a request comes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from jazzmine.core.tools import SandboxConfig, ToolRegistry
from jazzmine.sandbox import Outcome, RunRequest, SandboxBuilder
from jazzmine.sandbox.pool import WarmPool

from .helpers import collect, final, of_type

pytestmark = pytest.mark.docker

SANDBOX = "idle-burner"
IDLE_SECONDS = 3.0
TOOL = '''
def cpu_used(
    # Default values are evaluated as the tool's file loads, as the sandbox starts (the
    # registry keeps only the function, but all of it): a busy process and a busy thread.
    _process=__import__("subprocess").Popen(["python3", "-c", "while True: pass"]),
    _thread=__import__("threading").Thread(target=lambda: [None for _ in iter(int, 1) if False]).start(),
) -> ToolResponse:
    """CPU seconds this sandbox's processes used so far."""
    with open("/sys/fs/cgroup/cpuacct/cpuacct.usage") as handle:
        return ToolResponse(success=True, data=int(handle.read()) / 1e9)
'''


def make_registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_sandbox(SandboxConfig(name=SANDBOX))
    registry.register_source(TOOL, sandbox=SANDBOX, description="CPU used.", parameters=[],
                             dependencies=[], secrets=[], name="cpu_used")  # fmt: skip
    return registry


@pytest.fixture(scope="module")
def burner_image(docker_client, tmp_path_factory: pytest.TempPathFactory) -> str:
    cache: Path = tmp_path_factory.mktemp("idle-burner")
    builder = SandboxBuilder(make_registry(), client=docker_client, cache_dir=cache)
    return builder.ensure_image(SANDBOX).tag


async def test_a_warm_sandbox_whose_tool_starts_busy_work_at_import_waits_idle(
    runner, burner_image, limits
):
    async with WarmPool(runner, burner_image, limits, size=1) as pool:
        await asyncio.sleep(IDLE_SECONDS)  # ready, waiting in the pool
        events = await collect(pool.run(RunRequest(script="emit_result(cpu_used().data)\n")))
    assert final(events).outcome is Outcome.RESULT, events
    used = of_type(events, "result")[0].data
    # Starting Python and loading the tools takes a fraction of a second; burning, the
    # process and the thread take the sandbox's whole CPU share (1 CPU) while it waits.
    assert used < IDLE_SECONDS / 2, f"{used:.2f} s of CPU in {IDLE_SECONDS} s of waiting"
