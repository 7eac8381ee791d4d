"""A run whose image must be built does not hold up the events of the worker's other runs.

The worker stores every run's events on one database thread (in order); building an image
takes seconds to minutes, so it must happen elsewhere.
"""

from __future__ import annotations

import time
import uuid

import docker
import pytest

from jazzmine.sandbox.builder import KEYED_REPOSITORY_PREFIX
from jazzmine_web.catalog.services import sandbox_create, sandbox_image_key, tool_create
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create
from tests.waiting import wait_until

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

STEADY = """\
for i in range(400):
    emit_intermediate("tick", i)
    time.sleep(0.02)
emit_result("done")
"""


def test_a_run_keeps_storing_events_while_another_runs_image_builds(
    ecommerce, team, member, worker
) -> None:
    # A sandbox whose image nobody has built: content of its own, since an image is named by
    # its sandbox's id and content, and both can repeat. Ids start again in every test
    # database, and the session's worker keeps ready containers of the images it ran: an
    # empty sandbox's run would start in one of them, image or no image, and build nothing.
    marker = uuid.uuid4().hex
    fresh = sandbox_create(team=team, name=f"fresh-{marker[:8]}")
    tool_create(sandbox=fresh, name="marker", description="Name this image.",
                source=f"def marker():\n    return ToolResponse(success=True, result={marker!r})\n")  # fmt: skip
    repository = f"{KEYED_REPOSITORY_PREFIX}{sandbox_image_key(fresh)}"
    try:
        steady = run_create(sandbox=ecommerce, user=member, body=STEADY)
        wait_until(lambda: Run.objects.get(pk=steady.pk).event_count >= 3, timeout=120)
        building = run_create(sandbox=fresh, user=member, body="emit_result(1)\n")
        seen: list[tuple[float, int]] = []  # the steady run's stored events during the build

        def ended() -> bool:
            # Until the run ends: a run whose image the worker knew, removed since, is stored
            # RUNNING by its claim, then PREPARING while the image is made again.
            run = Run.objects.get(pk=building.pk)
            if run.status == RunStatus.PREPARING and run.message == "building image":
                seen.append((time.monotonic(), Run.objects.get(pk=steady.pk).event_count))
            return run.status in RunStatus.finished()

        wait_until(ended, timeout=300, interval=0.01)
        # Looked at every 10 ms: even a fully cached build (about 50 ms on a quiet machine) is
        # seen several times.
        assert len(seen) >= 3, f"too quick a build to tell: {seen}"
        # An event every 20 ms, stored as it comes: the count grows while the image is built,
        # instead of standing still until the build is over.
        assert len({count for _t, count in seen}) >= 2, f"the other run's events waited: {seen}"
        assert worker.future(building.pk).result() == RunStatus.SUCCEEDED
        assert worker.future(steady.pk).result() == RunStatus.SUCCEEDED
    finally:  # a new sandbox every time: its image would stay on the test machine for good
        images_remove(repository)


def images_remove(repository: str) -> None:
    client = docker.from_env()
    for image in client.images.list(name=repository):
        for tag in image.tags:  # a pool's container may still use it: untagged, pruned
            if tag.startswith(repository + ":"):
                client.images.remove(tag, force=True)
