from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from jazzmine_web.asgi import application
from jazzmine_web.runs.models import RunStatus
from jazzmine_web.runs.services import run_create
from tests.web.helpers import ws_headers

from .html import receive_until_finished, seqs

headers_for = database_sync_to_async(ws_headers)

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

BODY = """\
for i in range(3):
    emit_intermediate("step", {"i": i})
    time.sleep(0.05)
emit_result({"done": True})
"""


async def test_a_watcher_sees_every_event_live_then_the_final_status(ecommerce, member, worker):
    run = await database_sync_to_async(run_create)(sandbox=ecommerce, user=member, body=BODY)
    ws = WebsocketCommunicator(
        application, f"/ws/runs/{run.pk}/", headers=await headers_for(member)
    )
    connected, _ = await ws.connect()
    assert connected
    try:
        fragments, final = await receive_until_finished(ws)
        closed = await ws.receive_output(timeout=5)
    finally:
        await ws.disconnect()
    html = "".join(fragments)
    assert [n for f in fragments for n in seqs(f)] == [1, 2, 3, 5]  # 4 is the result
    assert html.count('class="intermediate"') == 3 and "exit: result" in html
    assert f'id="run-{run.pk}-result" data-run-result hx-swap-oob="true"' in html
    assert final == RunStatus.SUCCEEDED
    # A normal close: the page's ws extension does not retry it.
    assert closed == {"type": "websocket.close", "code": 1000}


async def test_a_reconnecting_watcher_gets_only_what_it_missed(ecommerce, member, worker):
    run = await database_sync_to_async(run_create)(sandbox=ecommerce, user=member, body=BODY)
    first = WebsocketCommunicator(
        application, f"/ws/runs/{run.pk}/", headers=await headers_for(member)
    )
    await first.connect()
    seen: list[int] = []
    while not seen:
        seen = seqs(await first.receive_from(timeout=60))
    await first.disconnect()  # the browser drops mid-run
    await asyncio.to_thread(worker.future(run.pk).result)

    again = WebsocketCommunicator(
        application, f"/ws/runs/{run.pk}/?after={seen[-1]}", headers=await headers_for(member)
    )
    await again.connect()
    try:
        fragments, final = await receive_until_finished(again)
    finally:
        await again.disconnect()
    assert len(fragments) == 1  # the run had finished: one snapshot, then the close
    expected = [n for n in (1, 2, 3, 5) if n > seen[-1]]
    assert seqs(fragments[0]) == expected
    assert final == RunStatus.SUCCEEDED


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
