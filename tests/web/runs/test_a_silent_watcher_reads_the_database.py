"""Live messages are Redis pub/sub: one sent while a web process reconnects is gone. A watcher
that hears nothing of an unfinished run for a while reads the database, so a lost end still
reaches the page (once), and a dropped subscription costs a delay, never a page that waits."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

from jazzmine_web.runs.models import Run, RunEvent, RunStatus
from jazzmine_web.runs.services import run_create, run_group
from jazzmine_web.studio import live
from tests.web.helpers import playground_socket, run_socket

from .html import receive_until_finished, seqs

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def quick_recheck(monkeypatch):
    monkeypatch.setattr(live, "SILENCE_SECONDS", 0.5)


@database_sync_to_async
def queued_run(ecommerce, member) -> Run:
    return run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)


@database_sync_to_async
def stored_silently(run_id, seqs_: range, *, end: bool) -> list[dict]:
    """Store events (and the run's end) the way a worker does, but let no message out."""
    events = []
    for seq in seqs_:
        event = {"seq": seq, "type": "log", "data": {"message": f"line {seq}"}, "ts": time.time()}
        RunEvent.objects.create(run_id=run_id, **event)
        events.append(event)
    if end:
        Run.objects.filter(pk=run_id).update(
            status=RunStatus.SUCCEEDED, outcome="result", finished_at=timezone.now()
        )
    return events


async def test_a_run_whose_messages_were_all_lost_still_shows_its_events_and_end(ecommerce, member):
    run = await queued_run(ecommerce, member)
    ws = await run_socket(run, member)
    try:
        await stored_silently(run.pk, range(1, 4), end=True)
        fragments, final = await receive_until_finished(ws)
        closed = await ws.receive_output(timeout=5)
    finally:
        await ws.disconnect()
    assert [s for html in fragments for s in seqs(html)] == [1, 2, 3]
    assert final == "succeeded"
    assert closed == {"type": "websocket.close", "code": 1000}


async def test_an_end_read_from_the_database_is_shown_once_when_its_message_comes_late(
    ecommerce, member
):
    run = await queued_run(ecommerce, member)
    ws = await playground_socket(member, timeout=10)
    try:
        await ws.send_json_to({"type": "follow", "run_id": str(run.pk), "after": 0})
        while (await ws.receive_json_from(timeout=5))["type"] != "status":
            pass
        await stored_silently(run.pk, range(1, 3), end=True)
        seen, ends = [], 0
        while not ends:
            message = await ws.receive_json_from(timeout=5)
            seen += seqs(message.get("html", ""))
            ends += message["type"] == "status" and message["status"] == "succeeded"
        # The worker's own messages arrive after all: nothing is shown twice.
        layer = get_channel_layer()
        events = [{"seq": 2, "type": "log", "data": {"message": "line 2"}, "ts": time.time()}]
        await layer.group_send(
            run_group(run.pk), {"type": "run.events", "run_id": str(run.pk), "events": events}
        )
        await layer.group_send(
            run_group(run.pk),
            {"type": "run.status", "run_id": str(run.pk), "status": "succeeded",
             "outcome": "result", "message": ""},
        )  # fmt: skip
        assert await ws.receive_nothing(timeout=1.0)
    finally:
        await ws.disconnect()
    assert seen == [1, 2]


def drop_subscribers() -> int:
    """Make Redis close this deployment's pub/sub connections; return how many it closed."""
    admin = redis.Redis.from_url(settings.JAZZMINE_REDIS_URL)
    name = settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]["client_name"]
    ours = [c for c in admin.client_list(_type="pubsub") if c.get("name") == name]
    return sum(admin.client_kill_filter(_id=c["id"]) for c in ours)


async def test_a_watcher_loses_nothing_when_redis_drops_its_subscription(
    ecommerce, member, monkeypatch
):
    run = await queued_run(ecommerce, member)
    ws = await run_socket(run, member)
    layer = get_channel_layer()
    try:
        # Redis drops this process's subscriber (a restart, a failover, a full output buffer):
        # events published meanwhile reach nobody.
        assert drop_subscribers() >= 1
        events = await stored_silently(run.pk, range(1, 3), end=False)
        await layer.group_send(
            run_group(run.pk), {"type": "run.events", "run_id": str(run.pk), "events": events}
        )
        got = []
        while len(got) < 2:
            got += seqs(await ws.receive_from(timeout=5))
        # Subscribed again, the next event comes live: no read of the database for 30 s now.
        monkeypatch.setattr(live, "SILENCE_SECONDS", 30.0)
        await asyncio.sleep(1.5)  # the reconnect, and the last short wait of the watcher
        events = await stored_silently(run.pk, range(3, 4), end=False)
        await layer.group_send(
            run_group(run.pk), {"type": "run.events", "run_id": str(run.pk), "events": events}
        )
        got += seqs(await ws.receive_from(timeout=5))
    finally:
        await ws.disconnect()
    assert got == [1, 2, 3]
