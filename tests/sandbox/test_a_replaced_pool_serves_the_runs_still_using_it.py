"""A warm pool the worker replaces goes only once no run uses it.

The worker replaces a sandbox's pool when a run had to build its image (another run may be
waiting on the old pool for a sandbox that could not start) and when the sandbox's image or
limits change (runs of the old code may still wait or run there). It closed the old pool at
once: a run waiting for one of its sandboxes then waited for ever, RUNNING with a live
heartbeat, so the reaper never ended it (three runs approved at once while their sandbox's
image was built: two of them never ended), and a run in one of its sandboxes lost it.
"""

from __future__ import annotations

import asyncio

import pytest

from jazzmine.sandbox import Outcome, RunRequest
from jazzmine.sandbox.pool import WarmPool
from jazzmine_web.runs.executor import _close_when_idle

from .conftest import leftover_containers
from .helpers import collect, final

pytestmark = pytest.mark.docker

SLOW = "time.sleep(1.5)\nemit_result('done')\n"


async def test_runs_running_and_waiting_on_a_replaced_pool_end_then_it_closes(
    runner, image, limits, docker_client
) -> None:
    pool = WarmPool(runner, image, limits, size=1)
    await pool.start()
    running = asyncio.ensure_future(collect(pool.run(RunRequest(script=SLOW))))
    waiting = asyncio.ensure_future(collect(pool.run(RunRequest(script=SLOW))))
    await asyncio.sleep(0.3)  # one runs in the ready sandbox, the other waits for a start
    assert pool.busy
    closing = asyncio.ensure_future(_close_when_idle(pool))
    outcomes = [final(events).outcome for events in await asyncio.wait_for(
        asyncio.gather(running, waiting), timeout=60)]  # fmt: skip
    await asyncio.wait_for(closing, timeout=30)
    assert outcomes == [Outcome.RESULT, Outcome.RESULT]
    assert not pool.busy and leftover_containers(docker_client) == []
