"""After its socket dropped, the playground asks to follow its run again from the last event its
pane was rendered with: the live lines come back whole, then the status; only the run's team
may ask."""

from __future__ import annotations

import time

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.runs.models import RunEvent
from jazzmine_web.runs.services import run_create
from tests.web.helpers import playground_socket
from tests.web.runs.html import seqs

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def queued_run_with_logs(ecommerce, member, count: int):
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    for seq in range(1, count + 1):
        RunEvent.objects.create(run=run, seq=seq, type="log", data={"message": "x"},
                                ts=time.time())  # fmt: skip
    return run


async def test_it_sends_the_events_after_the_pane_then_the_status(ecommerce, member):
    run = await queued_run_with_logs(ecommerce, member, 3)
    ws = await playground_socket(member, timeout=10)
    try:
        await ws.send_json_to({"type": "follow", "run_id": str(run.pk), "after": 1})
        fragments = await ws.receive_json_from(timeout=5)
        status = await ws.receive_json_from(timeout=5)
    finally:
        await ws.disconnect()
    assert fragments["type"] == "run_html" and fragments["run_id"] == str(run.pk)
    assert seqs(fragments["html"]) == [2, 3]
    assert f'<ol id="run-{run.pk}-logs-live" hx-swap-oob="true">' in fragments["html"]
    assert status == {"type": "status", "run_id": str(run.pk), "status": "queued",
                      "outcome": "", "message": ""}  # fmt: skip


async def test_someone_outside_the_team_cannot_follow_it(ecommerce, member, outsider):
    run = await queued_run_with_logs(ecommerce, member, 1)
    ws = await playground_socket(outsider, timeout=10)
    try:
        await ws.send_json_to({"type": "follow", "run_id": str(run.pk), "after": 0})
        answer = await ws.receive_json_from(timeout=5)
        assert await ws.receive_nothing(timeout=0.2)
    finally:
        await ws.disconnect()
    assert answer == {"type": "error", "message": "no such run"}
