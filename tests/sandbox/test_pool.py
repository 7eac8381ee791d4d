"""WarmPool: readiness, dispatch latency, one run per sandbox, concurrency, shutdown."""

from __future__ import annotations

import asyncio
import statistics
import time

import pytest

from jazzmine.sandbox import Outcome, RunRequest
from jazzmine.sandbox.pool import WarmPool

from .conftest import leftover_containers
from .helpers import collect, final

pytestmark = pytest.mark.docker


async def test_a_started_pool_holds_ready_sandboxes(runner, image, limits, docker_client):
    pool = WarmPool(runner, image, limits, size=2)
    await pool.start()
    assert pool.ready_count == 2
    assert len(docker_client.containers.list(filters={"label": pool.label})) == 2
    await pool.close()
    assert docker_client.containers.list(all=True, filters={"label": pool.label}) == []


async def test_dispatch_to_first_event_is_fast(runner, image, limits):
    latencies = []
    async with WarmPool(runner, image, limits, size=2) as pool:
        for _ in range(6):
            await pool.start()  # measure dispatch, not refill
            started = time.perf_counter()
            async for event in pool.run(RunRequest(script="emit_log('hi')\nemit_result(1)\n")):
                if event.seq == 1:
                    latencies.append(time.perf_counter() - started)
    assert statistics.median(latencies) < 0.1, latencies


async def test_a_sandbox_serves_one_run_only(runner, image, limits):
    script = "emit_result(read_env('HOSTNAME').data)\n"
    async with WarmPool(runner, image, limits, size=1) as pool:
        first = await collect(pool.run(RunRequest(script=script)))
        second = await collect(pool.run(RunRequest(script=script)))
    assert first[0].data != second[0].data  # different containers


async def test_twenty_concurrent_runs_lose_no_event(runner, image, limits, docker_client):
    async def one(i: int) -> list:
        script = f"for k in range(10):\n    emit_intermediate('k', k)\nemit_result({i})\n"
        return await collect(pool.run(RunRequest(script=script)))

    async with WarmPool(runner, image, limits, size=3) as pool:
        runs = await asyncio.gather(*(one(i) for i in range(20)))
    for i, events in enumerate(runs):
        assert [e.seq for e in events] == list(range(1, 13))
        assert events[-2].data == i and final(events).outcome is Outcome.RESULT
    assert leftover_containers(docker_client) == []


async def test_a_sandbox_that_died_idle_is_never_handed_out(runner, image, limits, docker_client):
    async with WarmPool(runner, image, limits, size=1) as pool:
        victim = docker_client.containers.list(filters={"label": pool.label})[0]
        victim.kill()
        await asyncio.sleep(0.3)
        events = await collect(pool.run(RunRequest(script="emit_result('ok')\n")))
    assert final(events).outcome is Outcome.RESULT
