"""WarmPool: readiness, dispatch latency, one run per sandbox, concurrency, shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
import uuid

import docker
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


class Remaker:
    """Makes a removed image again (tags it anew from the image it was made of), counting."""

    def __init__(self, docker_client, source: str, tag: str, *, works: bool = True) -> None:
        self.client, self.source, self.tag, self.works = docker_client, source, tag, works
        self.calls = 0

    async def __call__(self) -> bool:
        self.calls += 1
        if self.works:
            repository, version = self.tag.rsplit(":", 1)
            self.client.images.get(self.source).tag(repository, version)
        return self.works


@pytest.fixture
def own_tag(docker_client, image):
    """A tag of the sandbox image that this test alone uses, and may remove."""
    tag = f"jazzmine-test/remake:{uuid.uuid4().hex[:12]}"
    repository, version = tag.rsplit(":", 1)
    docker_client.images.get(image).tag(repository, version)
    yield tag
    with contextlib.suppress(docker.errors.ImageNotFound):
        docker_client.images.remove(tag)


async def test_two_runs_when_the_image_went_away_both_run(
    runner, image, own_tag, limits, docker_client
):
    remaker = Remaker(docker_client, image, own_tag)
    async with WarmPool(runner, own_tag, limits, size=1) as pool:
        docker_client.images.remove(own_tag)  # its one ready sandbox still runs
        # One takes the ready sandbox, the other must start one: the image is gone then.
        runs = await asyncio.gather(
            *(collect(pool.run(RunRequest(script=f"emit_result({i})\n"), remake=remaker))
              for i in range(2))
        )  # fmt: skip
        assert [final(events).outcome for events in runs] == [Outcome.RESULT] * 2, runs
        assert remaker.calls == 1
        # Made again: the pool refills, and the next run needs nothing more.
        events = await collect(pool.run(RunRequest(script="emit_result(2)\n"), remake=remaker))
        assert final(events).outcome is Outcome.RESULT and remaker.calls == 1
    assert leftover_containers(docker_client) == []


async def test_a_start_without_its_image_fails_when_it_cannot_be_made_again(
    runner, image, own_tag, limits, docker_client
):
    cannot = Remaker(docker_client, image, own_tag, works=False)
    docker_client.images.remove(own_tag)
    async with WarmPool(runner, own_tag, limits, size=1) as pool:
        for remake in (None, cannot):
            events = await collect(pool.run(RunRequest(script="emit_result(1)\n"), remake=remake))
            assert final(events).outcome is Outcome.BUILD_FAILED
            assert "is not built" in str(final(events).data)
    assert cannot.calls == 1


async def test_a_cold_start_without_its_image_makes_it_again_once(
    runner, image, own_tag, limits, docker_client
):
    docker_client.images.remove(own_tag)
    one_shot = runner.bind(own_tag, limits)
    cannot = Remaker(docker_client, image, own_tag, works=False)
    events = await collect(one_shot.run(RunRequest(script="emit_result(1)\n"), remake=cannot))
    assert final(events).outcome is Outcome.BUILD_FAILED and cannot.calls == 1
    remaker = Remaker(docker_client, image, own_tag)
    for _ in range(2):  # once made, the next start finds it
        events = await collect(one_shot.run(RunRequest(script="emit_result(1)\n"), remake=remaker))
        assert final(events).outcome is Outcome.RESULT
    assert remaker.calls == 1
    assert leftover_containers(docker_client) == []
