"""A long request's waiter on the real Redis channel layer: it wakes on messages, times out
otherwise, and leaves nothing subscribed behind it (on the pub/sub layer a channel is
unsubscribed only by cancelling its receive)."""

from __future__ import annotations

import asyncio
import time
import uuid

import redis
from channels.layers import get_channel_layer
from django.conf import settings

from jazzmine_web.studio.live import GroupWaiter


def subscribed(channels: list[str]) -> list[str]:
    """Return which of these channels this process's layer or Redis still holds."""
    held = get_channel_layer().channels  # this event loop's layer
    client = redis.Redis.from_url(settings.JAZZMINE_REDIS_URL)
    try:
        in_redis = {name.decode() for name in client.pubsub_channels()}
    finally:
        client.close()
    return [name for name in channels if name in held or name in in_redis]


async def test_a_message_wakes_it_and_silence_times_out():
    group = f"waiter-test-{uuid.uuid4().hex}"
    async with GroupWaiter() as waiter:
        await waiter.join([group])
        assert subscribed([waiter.channel]) == [waiter.channel]
        started = time.monotonic()
        assert await waiter.wait(0.3) is False
        assert time.monotonic() - started >= 0.25
        await get_channel_layer().group_send(group, {"type": "anything"})
        started = time.monotonic()
        assert await waiter.wait(5) is True
        assert time.monotonic() - started < 2
        # The message was used up: the next wait sleeps again.
        assert await waiter.wait(0.2) is False
    assert subscribed([waiter.channel]) == []


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


async def test_many_short_waits_leave_no_channel_subscribed():
    """Requests that come and go, with timeouts shorter than a Redis round trip and messages
    in between: none hangs, and none leaves its channel in this process or in Redis."""
    group = f"waiter-test-{uuid.uuid4().hex}"
    layer = get_channel_layer()
    channels: list[str] = []
    started = time.monotonic()
    for _round in range(10):
        async with GroupWaiter() as waiter:
            channels.append(waiter.channel)
            await waiter.join([group])
            for n in range(15):
                if n % 3 == 0:
                    await layer.group_send(group, {"type": "event"})
                await waiter.wait(0.001 * n)
    assert time.monotonic() - started < 30
    assert len(set(channels)) == 10 and subscribed(channels) == []
    # Nor the group: nobody waits on it any more.
    assert layer.groups == {} or all(group not in name for name in layer.groups)


async def test_a_request_cancelled_while_it_waits_leaves_nothing_subscribed():
    """A client that goes away cancels its request in the middle of a wait."""
    seen: list[str] = []

    async def request() -> None:
        async with GroupWaiter() as waiter:
            seen.append(waiter.channel)
            await waiter.join([f"waiter-test-{uuid.uuid4().hex}"])
            await waiter.wait(30)

    task = asyncio.ensure_future(request())
    while not seen:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert subscribed(seen) == []


async def test_without_a_layer_it_sleeps_out_its_timeout():
    waiter = GroupWaiter()
    waiter.layer = None
    async with waiter:
        started = time.monotonic()
        assert await waiter.wait(0.2) is False
        assert time.monotonic() - started >= 0.15
