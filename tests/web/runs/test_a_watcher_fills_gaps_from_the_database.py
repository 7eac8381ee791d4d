"""A live message that never arrives is read from the database: a watcher sees every event."""

from __future__ import annotations

import contextlib
import time

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from jazzmine_web.runs.models import RunEvent
from jazzmine_web.runs.services import run_create, run_group
from tests.web.helpers import run_socket

from .html import seqs

pytestmark = pytest.mark.django_db(transaction=True)


def store(run_id, seq: int) -> dict:
    event = {"seq": seq, "type": "log", "data": {"message": f"line {seq}"}, "ts": time.time()}
    RunEvent.objects.create(run_id=run_id, **event)
    return event


@contextlib.asynccontextmanager
async def watching(ecommerce, member):
    """A queued run and a socket on its page, past the first status."""
    run = await database_sync_to_async(run_create)(
        sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False
    )
    ws = await run_socket(run, member)
    try:
        yield run, ws
    finally:
        await ws.disconnect()


async def test_a_watcher_fills_a_gap_in_live_events_in_order(ecommerce, member):
    async with watching(ecommerce, member) as (run, ws):
        events = [await database_sync_to_async(store)(run.pk, seq) for seq in (1, 2, 3, 4)]
        layer = get_channel_layer()
        # Only the first and the last reach the group (through Redis): 2 and 3 were lost.
        for event in (events[0], events[3]):
            await layer.group_send(
                run_group(run.pk), {"type": "run.events", "run_id": str(run.pk), "events": [event]}
            )
        seen = seqs(await ws.receive_from(timeout=5))
        seen += seqs(await ws.receive_from(timeout=5))
        assert await ws.receive_nothing(timeout=0.2)
    assert seen == [1, 2, 3, 4]


async def test_batches_that_overlap_or_skip_still_show_each_event_once_in_order(ecommerce, member):
    async with watching(ecommerce, member) as (run, ws):
        events = [await database_sync_to_async(store)(run.pk, seq) for seq in range(1, 8)]
        layer = get_channel_layer()
        # [1, 2], then [2, 3] (2 again), then [6, 7]: 4 and 5 were in a batch that was lost.
        for batch in (events[0:2], events[1:3], events[5:7]):
            await layer.group_send(
                run_group(run.pk), {"type": "run.events", "run_id": str(run.pk), "events": batch}
            )
        seen: list[int] = []
        while len(seen) < 7:
            seen += seqs(await ws.receive_from(timeout=5))
        assert await ws.receive_nothing(timeout=0.2)
    assert seen == [1, 2, 3, 4, 5, 6, 7]
