"""A one-shot container found stale before its request is removed, and the run takes another.

`vet` reads the image a container was made from and returns the request that image may get
(a run's secrets go only beside wheel files an admin accepted); it raises `SandboxStale` when
the tag moved between the start and the read. The warm pool's side of this is tested with the
run worker; here the one-shot runner (bash runs, a pool-less start) on the real engine: the
stale container goes before the next starts, the request reaches only a container vetted, and
a run whose tag keeps moving ends with the error rather than in a container not vetted.
"""

from __future__ import annotations

import dataclasses

import pytest

from jazzmine.sandbox import RunRequest
from jazzmine.sandbox.docker_runner import POOL_LABEL, STALE_ATTEMPTS
from jazzmine.sandbox.errors import SandboxStale

from .helpers import collect, final, of_type

pytestmark = pytest.mark.docker

SCRIPT = "emit_result(read_env('VETTED').data or 'not vetted')\n"


def one_shots(client) -> list[str]:
    """Return the ids of the one-shot containers on the engine now."""
    return [c.id for c in client.containers.list(all=True, filters={"label": f"{POOL_LABEL}=none"})]


class Vetter:
    """A `vet` that finds the first `stale` containers stale, then lets the request through."""

    def __init__(self, client, *, stale: int) -> None:
        self.client = client
        self.stale = stale
        self.images: list[str] = []
        self.alive: list[list[str]] = []  # the one-shot containers there were at each call

    async def __call__(self, image_id: str) -> RunRequest:
        self.images.append(image_id)
        self.alive.append(one_shots(self.client))
        if len(self.images) <= self.stale:
            raise SandboxStale("the tag moved since this container started")
        return RunRequest(script=SCRIPT, secrets={"VETTED": f"by call {len(self.images)}"})


@pytest.mark.parametrize("stale", [1, STALE_ATTEMPTS - 1])
async def test_a_stale_container_is_removed_and_the_run_goes_on_in_a_vetted_one(
    runner, image, limits, docker_client, stale
):
    before = set(one_shots(docker_client))
    vet = Vetter(docker_client, stale=stale)
    # The request as the caller has it: what reaches the sandbox is the one `vet` returned.
    request = RunRequest(script=SCRIPT)
    events = await collect(runner.bind(image, limits).run(request, vet=vet))
    assert final(events).data["outcome"] == "result", events
    assert of_type(events, "result")[0].data == f"by call {stale + 1}"
    image_id = docker_client.images.get(image).id
    assert vet.images == [image_id] * (stale + 1)
    # One container at a time: each stale one was gone before the next was vetted.
    assert all(len(set(alive) - before) == 1 for alive in vet.alive), vet.alive
    assert len({tuple(set(alive) - before) for alive in vet.alive}) == stale + 1
    assert set(one_shots(docker_client)) == before


async def test_a_tag_that_keeps_moving_ends_the_run_with_its_error_and_no_container(
    runner, image, limits, docker_client
):
    before = set(one_shots(docker_client))
    vet = Vetter(docker_client, stale=STALE_ATTEMPTS)
    with pytest.raises(SandboxStale):
        await collect(runner.bind(image, limits).run(RunRequest(script=SCRIPT), vet=vet))
    assert len(vet.images) == STALE_ATTEMPTS
    assert set(one_shots(docker_client)) == before


async def test_a_vet_that_fails_otherwise_removes_its_container(
    runner, image, limits, docker_client
):
    before = set(one_shots(docker_client))

    async def broken(image_id: str) -> RunRequest:
        raise RuntimeError("the engine said something unreadable")

    with pytest.raises(RuntimeError, match="unreadable"):
        await collect(runner.bind(image, limits).run(RunRequest(script=SCRIPT), vet=broken))
    assert set(one_shots(docker_client)) == before


async def test_without_vet_the_request_goes_as_given(runner, image, limits):
    request = dataclasses.replace(RunRequest(script=SCRIPT), secrets={"VETTED": "as given"})
    events = await collect(runner.bind(image, limits).run(request))
    assert of_type(events, "result")[0].data == "as given"
