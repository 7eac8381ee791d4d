"""The run socket sends the page's own partials, out of band: what is after `?after=N` first
(replacing the live lines whole, so a reconnect with the same N shows each event once), then
each new event appended in order, and the status region replaced."""

from __future__ import annotations

import time

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from jazzmine_web.asgi import application
from jazzmine_web.runs.models import RunEvent
from jazzmine_web.runs.services import run_create, run_record_event, run_set_status
from tests.web.helpers import ws_headers

from .html import seqs, status

pytestmark = pytest.mark.django_db(transaction=True)


def log(run_id, seq: int) -> dict:
    return {"seq": seq, "type": "log", "data": {"message": f"line {seq}"}, "ts": time.time()}


@database_sync_to_async
def queued_run_with_events(ecommerce, member, count: int):
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    for seq in range(1, count + 1):
        RunEvent.objects.create(run=run, **log(run.pk, seq))
    return run


async def connect(member, path: str) -> WebsocketCommunicator:
    ws = WebsocketCommunicator(
        application, path, headers=await database_sync_to_async(ws_headers)(member)
    )
    connected, _ = await ws.connect()
    assert connected
    return ws


async def test_it_sends_what_is_after_the_seq_then_live_events_in_order(ecommerce, member):
    run = await queued_run_with_events(ecommerce, member, 3)
    ws = await connect(member, f"/ws/runs/{run.pk}/?after=2")
    try:
        snapshot = await ws.receive_from(timeout=5)
        record = database_sync_to_async(run_record_event)
        for seq in (4, 5):
            await record(run_id=run.pk, event=log(run.pk, seq))
        appended = [await ws.receive_from(timeout=5) for _ in range(2)]
        await database_sync_to_async(run_set_status)(run_id=run.pk, status="running")
        running = await ws.receive_from(timeout=5)
    finally:
        await ws.disconnect()
    assert seqs(snapshot) == [3]
    assert f'<ol id="run-{run.pk}-logs-live" hx-swap-oob="true">' in snapshot
    assert f'<ol id="run-{run.pk}-timeline-live" hx-swap-oob="true"></ol>' in snapshot
    assert f'<header class="run-head" id="run-{run.pk}-head" hx-swap-oob="true">' in snapshot
    assert [seqs(html) for html in appended] == [[4], [5]]
    assert all(f'id="run-{run.pk}-logs-live" hx-swap-oob="beforeend"' in h for h in appended)
    assert status(running) == "running" and seqs(running) == []


async def test_a_reconnect_with_the_same_seq_replaces_the_live_lines(ecommerce, member):
    run = await queued_run_with_events(ecommerce, member, 1)
    first = await connect(member, f"/ws/runs/{run.pk}/?after=1")
    try:
        await first.receive_from(timeout=5)
        await database_sync_to_async(run_record_event)(run_id=run.pk, event=log(run.pk, 2))
        assert seqs(await first.receive_from(timeout=5)) == [2]
    finally:
        await first.disconnect()
    await database_sync_to_async(run_record_event)(run_id=run.pk, event=log(run.pk, 3))
    again = await connect(member, f"/ws/runs/{run.pk}/?after=1")
    try:
        snapshot = await again.receive_from(timeout=5)
    finally:
        await again.disconnect()
    assert f'<ol id="run-{run.pk}-logs-live" hx-swap-oob="true">' in snapshot
    assert seqs(snapshot) == [2, 3]


async def test_a_finished_run_is_sent_once_then_the_socket_closes(ecommerce, member):
    run = await queued_run_with_events(ecommerce, member, 2)
    await database_sync_to_async(run_set_status)(run_id=run.pk, status="failed", message="x")
    ws = await connect(member, f"/ws/runs/{run.pk}/?after=0")
    try:
        snapshot = await ws.receive_from(timeout=5)
        closed = await ws.receive_output(timeout=5)
    finally:
        await ws.disconnect()
    assert seqs(snapshot) == [1, 2] and status(snapshot) == "failed"
    assert closed == {"type": "websocket.close", "code": 1000}
