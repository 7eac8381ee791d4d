"""A warm sandbox is removed, and its pool refilled, only once its run's events are stored.

Removing a container and starting the pool's next one are engine calls that take both cores
for tens of milliseconds; a short script's events (its first one among them) are still on
their way to the database and the watchers then. The worker finishes storing them first,
even when the database is slow.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from jazzmine.sandbox.docker_runner import DockerProcess
from jazzmine_web.catalog.services import sandbox_builder
from jazzmine_web.runs import services
from jazzmine_web.runs.executor import RunExecutor
from jazzmine_web.runs.models import RunEvent, RunStatus
from jazzmine_web.runs.services import run_create

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

BODY = 'emit_log("hi")\nemit_result(1)\n'
SLOW_STORE_SECONDS = 0.3


def test_the_sandbox_waits_for_its_runs_last_events_to_be_stored(
    ecommerce, member, base_image, monkeypatch
):
    sandbox_builder(ecommerce).ensure_image(ecommerce.name)
    current: dict[str, object] = {}
    removals: list[tuple[object, bool]] = []  # (run, was its exit stored when removal began)

    record_events = services.run_record_events

    def slow_record_events(*, run_id, events, **kwargs):
        if any(e.get("type") == "exit" for e in events):
            time.sleep(SLOW_STORE_SECONDS)  # a database busy with another writer
        return record_events(run_id=run_id, events=events, **kwargs)

    remove = DockerProcess.remove

    async def observed_remove(self):
        run_id = current.pop("run", None)
        if run_id is not None:  # the sandbox that served the run (not an idle one at shutdown)
            stored = await asyncio.to_thread(
                lambda: RunEvent.objects.filter(run_id=run_id, type="exit").exists()
            )
            removals.append((run_id, stored))
        await remove(self)

    monkeypatch.setattr(services, "run_record_events", slow_record_events)
    monkeypatch.setattr(DockerProcess, "remove", observed_remove)
    executor = RunExecutor(pool_size=1)
    try:
        executor.learn_images()
        runs = []
        for _ in range(2):  # the second from the pool the first one's end refilled
            run = run_create(sandbox=ecommerce, user=member, body=BODY, start=False)
            current["run"] = run.pk
            status = executor.submit(run.pk, worker="w1@test").result(timeout=180)
            assert status == RunStatus.SUCCEEDED
            runs.append(run.pk)
        assert removals == [(runs[0], True), (runs[1], True)]
    finally:
        executor.shutdown()
