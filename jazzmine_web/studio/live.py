"""Send channel-layer messages from worker threads to the consumers of the server's loop.

Shared by every app whose workers (image builds, runs, reviews) talk to live pages.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from asyncio import FIRST_COMPLETED
from collections.abc import Awaitable, Callable
from typing import Any

from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)
_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def remember_loop() -> None:
    """Record the running event loop (the server's: consumers and requests run on it)."""
    global _loop
    loop = asyncio.get_running_loop()
    if _loop is not loop:
        with _lock:
            _loop = loop


class ServerLoop:
    """ASGI middleware: note the server's event loop before any request or socket runs.

    A channel layer object must be used from one event loop only (channels-redis keeps its
    connections per loop and is not thread-safe): in a web process every send goes through
    the loop the consumers wait on, whatever thread it starts from.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        remember_loop()
        return await self.app(scope, receive, send)


def group_send(group: str, message: dict[str, Any]) -> None:
    """Send a message to a group from any thread; sends from one thread arrive in order.

    In a web process the send runs on the server's loop; in a worker (no server loop) on one
    sending loop of its own. From a thread other than the loop's it waits until the message
    reached the layer, so the next event of a run cannot overtake this one.
    """
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    server = _loop if _loop is not None and _loop.is_running() else None
    target = server or _sender_loop()
    if running is target:
        target.create_task(layer.group_send(group, message))  # on the loop: never block it
        return
    future = asyncio.run_coroutine_threadsafe(layer.group_send(group, message), target)
    if running is not None:
        return  # another loop (rare): never block it
    try:
        future.result(timeout=SEND_TIMEOUT_SECONDS)
    except Exception:
        logger.exception("could not send to %s; its watchers will read it from the database", group)


SEND_TIMEOUT_SECONDS = 10.0
_sender: asyncio.AbstractEventLoop | None = None


def _sender_loop() -> asyncio.AbstractEventLoop:
    """Return this process's sending loop: one thread, one loop, one Redis connection pool.

    A loop per send (what `async_to_sync` does off the server's loop) would open a Redis
    connection for every event.
    """
    global _sender
    with _lock:
        if _sender is None or _sender.is_closed():
            _sender = asyncio.new_event_loop()
            threading.Thread(target=_sender.run_forever, name="live-sender", daemon=True).start()
        return _sender


CLOSE_UNAUTHENTICATED = 4403
# A live page that heard nothing for this long reads the database (see `Silence`).
SILENCE_SECONDS = 5.0


class Silence:
    """Call `on_silence` whenever a consumer heard nothing for a while, until it answers False.

    Live messages are Redis pub/sub, which keeps nothing for a process that is reconnecting
    (a restart, a failover, an output buffer Redis found too full). A gap in numbered
    messages shows itself at the next one; a lost last message (a run's or a build's end)
    never would, and the page would wait forever. Fail closed: a consumer that waits for an
    end reads the database after every silence, so a lost message costs seconds, not the end.
    `seconds` is read at each wait (a test may shorten it).
    """

    def __init__(
        self, on_silence: Callable[[], Awaitable[bool]], seconds: Callable[[], float]
    ) -> None:
        self._on_silence = on_silence
        self._seconds = seconds
        self._heard = 0.0
        self._task: asyncio.Task[None] | None = None

    def heard(self) -> None:
        """Note that a message arrived: the next read waits a full silence from now."""
        self._heard = asyncio.get_running_loop().time()

    def start(self) -> None:
        """Start watching (again, if it had stopped)."""
        self.heard()
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._watch())

    def stop(self) -> None:
        """Stop watching (a call from `on_silence` itself lets it return instead)."""
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
        self._task = None

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(max(0.0, self._heard + self._seconds() - loop.time()))
            if loop.time() - self._heard < self._seconds():
                continue  # something arrived meanwhile
            self.heard()
            try:
                if not await self._on_silence():
                    return
            except Exception:  # the database is away: try again after the next silence
                logger.exception("a live page could not read what it missed")


# How long a live message may rely on the last check that its watcher may still see what the
# socket streams: a check per message would be a query or two for each line of a busy build or
# batch of a busy run; this bounds how long someone who lost access still reads.
ACCESS_RECHECK_SECONDS = 1.0


class AccessRecheck:
    """Ask again, at most once per `ACCESS_RECHECK_SECONDS`, whether a socket may go on streaming.

    A socket stays open for as long as what it streams goes on (a run, an image build), so
    team access is not only checked as it connects: every live message asks `still_allowed`,
    and every full read of the database that checked access itself calls `passed`.
    """

    def __init__(self) -> None:
        self._passed_at = float("-inf")  # time.monotonic() of the last check that passed

    def passed(self) -> None:
        """Note that access was just checked (by a read that asks it) and held."""
        self._passed_at = time.monotonic()

    async def still_allowed(self, check: Callable[[], Awaitable[bool]]) -> bool:
        """Tell whether access holds, running `check` when the last pass is too old."""
        now = time.monotonic()
        # Read at each call: a test may shorten it.
        if now - self._passed_at < ACCESS_RECHECK_SECONDS:
            return True
        if not await check():
            return False
        self._passed_at = now
        return True


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


class GroupWaiter:
    """Let a long request sleep until a message reaches one of some channel groups.

    A long-poll or a stream reads the database only when something it watches changed (or,
    as a safety net, after `timeout`), instead of polling; between reads it holds nothing.

    One reader task receives for the whole request; waiting is on an `asyncio.Event`. The
    reader is cancelled when the request leaves: on the pub/sub layer a cancelled receive is
    what unsubscribes its channel (the layer has no other way to delete one), so a reader
    ended any other way would leave a subscription in Redis and a queue in this process
    per request, for good.
    """

    # Messages that arrive together (a burst of run events) wake the reader once.
    COALESCE_SECONDS = 0.02
    # How long leaving waits for the reader's channel to be unsubscribed.
    LEAVE_SECONDS = 2.0

    def __init__(self) -> None:
        self.layer = get_channel_layer()
        self.channel: str | None = None
        self.groups: set[str] = set()
        self._woken = asyncio.Event()
        self._reader: asyncio.Future[None] | None = None

    async def __aenter__(self) -> GroupWaiter:
        if self.layer is not None:
            try:
                self.channel = await self.layer.new_channel("waiter.")
            except Exception:
                self._lost("open a channel")
            else:
                self._reader = asyncio.ensure_future(self._read(self.channel))
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self.layer is None or self.channel is None:
            return
        for group in self.groups:
            with contextlib.suppress(Exception):
                await self.layer.group_discard(group, self.channel)
        reader = self._reader
        if reader is None or reader.done():
            return
        reader.cancel()
        # Its unsubscribe is done before the request ends (bounded: Redis may be gone).
        await asyncio.wait({reader}, timeout=self.LEAVE_SECONDS)

    async def _read(self, channel: str) -> None:
        while True:
            try:
                await self.layer.receive(channel)
            except Exception:
                self._lost("receive")
                return
            self._woken.set()

    async def join(self, groups: list[str]) -> None:
        """Also wake on messages to these groups."""
        if self.layer is None or self.channel is None:
            return
        try:
            for group in set(groups) - self.groups:
                await self.layer.group_add(group, self.channel)
                self.groups.add(group)
        except Exception:
            self._lost("join its groups")

    async def wait(self, timeout: float) -> bool:
        """Return True when a message woke us, False when `timeout` ran out first."""
        timeout = max(0.0, timeout)
        reader = self._reader
        if reader is None or reader.done() or self.channel is None:
            await asyncio.sleep(timeout)
            return False
        woken = asyncio.ensure_future(self._woken.wait())
        try:
            await asyncio.wait({woken, reader}, timeout=timeout, return_when=FIRST_COMPLETED)
        finally:
            woken.cancel()
        if not self._woken.is_set():
            return False
        # Let the rest of a burst arrive, so one burst costs one read of the database;
        # anything after the clear wakes the next wait.
        await asyncio.sleep(self.COALESCE_SECONDS)
        self._woken.clear()
        return True

    def _lost(self, what: str) -> None:
        # Without the channel layer (Redis down) the request still works: it reads the
        # database every `timeout` instead of on messages.
        logger.warning("a waiting request could not %s on the channel layer; it polls", what)
        self.channel = None
