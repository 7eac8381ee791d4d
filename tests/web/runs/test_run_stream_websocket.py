from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from jazzmine_web.asgi import application
from jazzmine_web.runs.models import RunStatus
from jazzmine_web.runs.services import run_create
from tests.web.helpers import ws_headers

headers_for = database_sync_to_async(ws_headers)

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

BODY = """\
for i in range(3):
    emit_intermediate("step", {"i": i})
    time.sleep(0.05)
emit_result({"done": True})
"""


async def receive_until_finished(ws: WebsocketCommunicator) -> tuple[list[dict], dict]:
    events: list[dict] = []
    while True:
        message = await ws.receive_json_from(timeout=60)
        if message["type"] == "event":
            events.append(message["event"])
        elif message["status"] in RunStatus.finished():
            return events, message


async def test_a_watcher_sees_every_event_live_then_the_final_status(ecommerce, member, worker):
    run = await database_sync_to_async(run_create)(sandbox=ecommerce, user=member, body=BODY)
    ws = WebsocketCommunicator(
        application, f"/ws/runs/{run.pk}/", headers=await headers_for(member)
    )
    connected, _ = await ws.connect()
    assert connected
    try:
        events, final = await receive_until_finished(ws)
    finally:
        await ws.disconnect()
    assert [e["type"] for e in events] == ["intermediate"] * 3 + ["result", "exit"]
    assert [e["seq"] for e in events] == list(range(1, 6))
    assert final["status"] == RunStatus.SUCCEEDED


async def test_a_reconnecting_watcher_gets_only_what_it_missed(ecommerce, member, worker):
    run = await database_sync_to_async(run_create)(sandbox=ecommerce, user=member, body=BODY)
    first = WebsocketCommunicator(
        application, f"/ws/runs/{run.pk}/", headers=await headers_for(member)
    )
    await first.connect()
    message = await first.receive_json_from(timeout=60)
    while message["type"] != "event":
        message = await first.receive_json_from(timeout=60)
    seen = message["event"]["seq"]
    await first.disconnect()  # the browser drops mid-run
    await asyncio.to_thread(worker.future(run.pk).result)

    again = WebsocketCommunicator(
        application, f"/ws/runs/{run.pk}/?after={seen}", headers=await headers_for(member)
    )
    await again.connect()
    try:
        events, final = await receive_until_finished(again)
    finally:
        await again.disconnect()
    assert [e["seq"] for e in events] == list(range(seen + 1, 6))
    assert final["status"] == RunStatus.SUCCEEDED


async def test_anonymous_and_outsiders_are_refused(ecommerce, member, outsider, worker):
    run = await database_sync_to_async(run_create)(sandbox=ecommerce, user=member, body=BODY)
    anonymous = WebsocketCommunicator(
        application, f"/ws/runs/{run.pk}/", headers=[(b"origin", b"http://localhost")]
    )
    connected, code = await anonymous.connect()
    assert not connected and code == 4403
    stranger = WebsocketCommunicator(
        application, f"/ws/runs/{run.pk}/", headers=await headers_for(outsider)
    )
    connected, code = await stranger.connect()
    assert not connected and code == 4404
