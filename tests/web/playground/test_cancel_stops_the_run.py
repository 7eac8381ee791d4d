"""Cancel on the playground stops the run it started: the sandbox is gone within a second."""

from __future__ import annotations

import time

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.runs.models import Run
from tests.web.helpers import SPIN, playground_socket, running_sandboxes

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]


async def test_cancel_kills_a_spinning_run_within_a_second(ecommerce, member, worker) -> None:
    ws = await playground_socket(member)
    try:
        await ws.send_json_to({"type": "run", "sandbox": ecommerce.pk, "task": "t", "body": SPIN})
        created = await ws.receive_json_from(timeout=120)
        assert created["type"] == "run_created"
        while True:  # wait until the script is really running: its first log line
            message = await ws.receive_json_from(timeout=120)
            if message["type"] == "run_html" and '<li class="log"' in message["html"]:
                break
        before = set(running_sandboxes())

        asked = time.monotonic()
        await ws.send_json_to({"type": "cancel"})
        while True:
            message = await ws.receive_json_from(timeout=10)
            if message["type"] == "status" and message["status"] == "failed":
                break
        took = time.monotonic() - asked
    finally:
        await ws.disconnect()
    run = await database_sync_to_async(Run.objects.get)(pk=created["run_id"])
    assert run.outcome == "cancelled" and "cancelled by" in run.message
    assert took < 1.5, f"cancel took {took:.2f} s"
    # The run's own sandbox is gone (the pool may have started fresh ones meanwhile).
    stopped = before - set(running_sandboxes())
    assert stopped, "the spinning sandbox is still there"


async def test_nobody_else_can_cancel_a_run(ecommerce, member, worker, django_user_model):
    from jazzmine_web.runs.lifecycle import run_cancel

    ws = await playground_socket(member)
    try:
        await ws.send_json_to({"type": "run", "sandbox": ecommerce.pk, "task": "t", "body": SPIN})
        created = await ws.receive_json_from(timeout=120)
        run = await database_sync_to_async(Run.objects.get)(pk=created["run_id"])
        other = await database_sync_to_async(django_user_model.objects.create_user)(
            username="mallory", password="x" * 12
        )
        assert not await database_sync_to_async(run_cancel)(run=run, user=other)
        assert await database_sync_to_async(run_cancel)(run=run, user=member)
    finally:
        await ws.disconnect()
