"""A run cancelled while the engine is still creating its container leaves no container behind.

The engine's create goes on in a thread whatever happens to the run. Before, a cancel that came
during it (a person's, or a stopping worker's) dropped the container's id: a one-shot (bash)
container stayed in `created` state for good, since no sweep of a living worker looks for it.
Found after a test session: one such container, never started, outlived its worker.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from jazzmine.sandbox.containers import run_one_shot

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("cancel_after", [0.05, 0.3], ids=["during the create", "just after"])
async def test_a_cancelled_one_shot_leaves_no_container(
    docker_client, image, limits, monkeypatch, cancel_after
):
    mark = uuid.uuid4().hex
    create = docker_client.api.create_container_from_config

    def slow_create(*args, **kwargs):  # the engine, on a busy host
        time.sleep(0.2)
        return create(*args, **kwargs)

    monkeypatch.setattr(docker_client.api, "create_container_from_config", slow_create)
    task = asyncio.create_task(
        run_one_shot(
            image,
            ["sleep", "30"],
            stdin=b"",
            limits=limits,
            timeout_seconds=30,
            labels={"jazzmine.test": mark},
            client=docker_client,
        )
    )
    await asyncio.sleep(cancel_after)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.5)  # a create the cancel left going on in its thread has ended
    left = docker_client.containers.list(all=True, filters={"label": f"jazzmine.test={mark}"})
    for container in left:
        container.remove(force=True)
    assert left == []
