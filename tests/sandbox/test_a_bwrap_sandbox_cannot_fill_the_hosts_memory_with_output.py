"""A bubblewrap sandbox cannot fill the host's memory with output its driver is not reading.

The driver counts a run's output against its cap only as it takes it. The bubblewrap backend
read the sandbox's pipes eagerly into an unbounded queue: while its caller paused (storing the
run's end right after `exit`, say), a forked, setsid'd child writing to stderr grew the host
worker by hundreds of MiB past a 1 MB cap. Now the sandbox's writers wait instead, as on
Docker's attach socket, and the sandbox still ends at once when the run is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from jazzmine.sandbox import Event, Outcome, RunLimits, RunRequest
from jazzmine.sandbox.bwrap import BwrapRunner

from .bwrap_support import requires_bwrap, runtime_dir
from .helpers import final, of_type

pytestmark = requires_bwrap
__all__ = ["runtime_dir"]  # the fixture, used by name

LIMITS = RunLimits(memory_mb=128, pids_limit=32, timeout_seconds=20, max_output_bytes=1_000_000)
# Several times what the driver can ever accept (1 MB), far below what the flood reaches.
HELD_BOUND = 32 * 1024 * 1024
# Past this the old behaviour is proven: stop the run rather than let it take gigabytes.
GIVE_UP_AT = 2 * HELD_BOUND
PAUSE_SECONDS = 1.5
# The sandbox must be gone well before `remove`'s own 5 s wait for it runs out.
ENDS_WITHIN_SECONDS = 3.0

# The result comes first; a child out of the run's session then floods stderr for good.
AFTER_EXIT = """
import os, time
if os.fork() == 0:
    os.setsid(); time.sleep(0.3); b = b"E" * (1 << 20)
    while True: os.write(2, b)
emit_result("done")
"""

# A log first (the consumer pauses on it), then stderr flooded by the script itself.
MID_RUN = """
import os, time
emit_log("flooding")
time.sleep(0.2)
b = b"E" * (1 << 20)
while True: os.write(2, b)
"""


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


async def run_pausing(
    runtime_dir: Path, script: str, *, pause_on: str
) -> tuple[list[Event], int, float]:
    """Run `script`, pausing after the first event of type `pause_on`.

    Returns the events, the most memory held above the start meanwhile (traced allocations of
    this process) and the seconds from the pause's end until the run was over.
    """
    runner = BwrapRunner(allow_unrestricted=True).bind(runtime_dir, LIMITS)
    request = RunRequest(script=script, unrestricted=True)
    events: list[Event] = []
    resumed = 0.0

    async def consume() -> None:
        nonlocal resumed
        paused = False
        async with contextlib.aclosing(runner.run(request)) as stream:
            async for event in stream:
                events.append(event)
                if event.type == pause_on and not paused:
                    paused = True
                    await asyncio.sleep(PAUSE_SECONDS)  # e.g. storing the run's end
                    resumed = time.monotonic()
        if not resumed:
            resumed = time.monotonic()

    baseline = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    consumer = asyncio.ensure_future(consume())
    async with asyncio.timeout(60):
        while not consumer.done():
            await asyncio.wait({consumer}, timeout=0.01)
            if tracemalloc.get_traced_memory()[0] - baseline > GIVE_UP_AT:
                consumer.cancel()  # the sandbox is removed as the run is closed
                with contextlib.suppress(asyncio.CancelledError):
                    await consumer
                break
        else:
            await consumer
    held = tracemalloc.get_traced_memory()[1] - baseline
    return events, held, time.monotonic() - resumed


@pytest.mark.usefixtures("traced")
async def test_a_child_flooding_stderr_while_the_caller_stores_the_runs_end(runtime_dir) -> None:
    events, held, ending = await run_pausing(runtime_dir, AFTER_EXIT, pause_on="exit")
    assert held < HELD_BOUND, f"the host held {held / 2**20:.0f} MiB of output"
    assert final(events).outcome is Outcome.RESULT, events[-2:]
    assert [e.data for e in of_type(events, "result")] == ["done"]
    assert ending < ENDS_WITHIN_SECONDS


@pytest.mark.usefixtures("traced")
async def test_a_script_flooding_stderr_while_the_caller_pauses_mid_run(runtime_dir) -> None:
    events, held, ending = await run_pausing(runtime_dir, MID_RUN, pause_on="log")
    assert held < HELD_BOUND, f"the host held {held / 2**20:.0f} MiB of output"
    assert final(events).outcome is Outcome.OUTPUT_LIMIT, events[-2:]
    assert ending < ENDS_WITHIN_SECONDS
