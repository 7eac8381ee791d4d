"""A long request's waiter on the real Redis channel layer: it wakes on messages, times out
otherwise, and leaves without ever cancelling a receive (channels-redis can lose a
cancellation inside its blocking pop, and that receive then waits forever)."""

from __future__ import annotations

import asyncio
import time
import uuid

from channels.layers import get_channel_layer

from jazzmine_web.studio.live import GroupWaiter


def watch_receives(monkeypatch) -> dict[str, int]:
    """Count the layer's receives that started, returned and were cancelled."""
    layer = get_channel_layer()
    counts = {"started": 0, "returned": 0, "cancelled": 0}
    real = layer.receive

    async def receive(channel):
        counts["started"] += 1
        try:
            message = await real(channel)
        except asyncio.CancelledError:
            counts["cancelled"] += 1
            raise
        counts["returned"] += 1
        return message

    monkeypatch.setattr(layer, "receive", receive)
    return counts


async def test_a_message_wakes_it_and_silence_times_out(monkeypatch):
    counts = watch_receives(monkeypatch)
    group = f"waiter-test-{uuid.uuid4().hex}"
    async with GroupWaiter() as waiter:
        await waiter.join([group])
        started = time.monotonic()
        assert await waiter.wait(0.3) is False
        assert time.monotonic() - started >= 0.25
        await get_channel_layer().group_send(group, {"type": "anything"})
        started = time.monotonic()
        assert await waiter.wait(5) is True
        assert time.monotonic() - started < 2
        # The message was used up: the next wait sleeps again.
        assert await waiter.wait(0.2) is False
    assert counts["cancelled"] == 0
    assert counts["started"] == counts["returned"]


async def test_a_burst_wakes_it_a_few_times_not_once_per_message():
    group = f"waiter-test-{uuid.uuid4().hex}"
    layer = get_channel_layer()
    async with GroupWaiter() as waiter:
        await waiter.join([group])
        for n in range(20):
            await layer.group_send(group, {"type": "event", "n": n})
        wakes = 0
        while await waiter.wait(0.3):
            wakes += 1
        assert 1 <= wakes <= 3


async def test_many_short_waits_never_cancel_a_receive(monkeypatch):
    """The pattern that hung: timeouts shorter than a Redis round trip, again and again,
    with messages arriving in between."""
    counts = watch_receives(monkeypatch)
    group = f"waiter-test-{uuid.uuid4().hex}"
    layer = get_channel_layer()
    started = time.monotonic()
    for _round in range(10):
        async with GroupWaiter() as waiter:
            await waiter.join([group])
            for n in range(15):
                if n % 3 == 0:
                    await layer.group_send(group, {"type": "event"})
                await waiter.wait(0.001 * n)
    assert time.monotonic() - started < 30
    assert counts["cancelled"] == 0
    assert counts["started"] == counts["returned"] > 10


async def test_without_a_layer_it_sleeps_out_its_timeout():
    waiter = GroupWaiter()
    waiter.layer = None
    async with waiter:
        started = time.monotonic()
        assert await waiter.wait(0.2) is False
        assert time.monotonic() - started >= 0.15
