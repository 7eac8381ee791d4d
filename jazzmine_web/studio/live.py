"""Send channel-layer messages from worker threads to the consumers of the server's loop.

Shared by every app whose workers (image builds, runs, reviews) talk to live pages.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def remember_loop() -> None:
    """Record the running event loop (called by consumers, which run on the server's loop)."""
    global _loop
    with _lock:
        _loop = asyncio.get_running_loop()


def group_send(group: str, message: dict[str, Any]) -> None:
    """Send a message to a group from any thread, without blocking on the consumers."""
    layer = get_channel_layer()
    if layer is None:
        return
    loop = _loop
    if loop is not None and loop.is_running() and not loop.is_closed():
        # The in-memory layer is plain asyncio queues, which are not thread-safe: hand the
        # send to the loop the consumers wait on instead of running it on a loop of our own.
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            loop.create_task(layer.group_send(group, message))
        else:
            asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)
        return
    async_to_sync(layer.group_send)(group, message)


CLOSE_UNAUTHENTICATED = 4403


async def connecting_user(consumer: Any, *, close_code: int = CLOSE_UNAUTHENTICATED) -> Any:
    """Return the logged-in user of a connecting websocket, or close it and return None.

    Also records the server's loop, so that workers can reach this consumer's groups.
    """
    remember_loop()
    user = consumer.scope.get("user")
    if user is None or not user.is_authenticated:
        await consumer.close(code=close_code)
        return None
    return user
