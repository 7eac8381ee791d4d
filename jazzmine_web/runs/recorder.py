"""Store a run's events in order, in batches of what arrived while the last batch was stored.

An idle recorder stores an event the moment it arrives (a batch of one: no added latency);
a busy one stores everything that piled up meanwhile in one write. A burst of 1000 events
then costs a handful of transactions and channel messages instead of 1000 of each, and a
slow database slows the batches down instead of the sandbox (which would otherwise block on
its full output pipe and run into its time limit).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

Store = Callable[[list[dict[str, Any]]], Awaitable[bool]]
# A cap per write: one channel message and one transaction stay a reasonable size.
BATCH_MOST = 500


class EventRecorder:
    """Hand events to `store` in arrival order; `store` tells whether it kept them all."""

    def __init__(self, store: Store, *, most: int = BATCH_MOST) -> None:
        self._store = store
        self._most = most
        self._pending: list[dict[str, Any]] = []
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()  # nothing queued, and no write in progress
        self._idle.set()
        self._closing = False
        self.task: asyncio.Task[bool] = asyncio.get_running_loop().create_task(self._write())

    def add(self, event: dict[str, Any]) -> None:
        """Queue one event (ignored once a refusal stopped the recorder)."""
        if not self.task.done():
            self._pending.append(event)
            self._idle.clear()
            self._wake.set()

    async def flushed(self) -> None:
        """Wait until every event added so far was stored (or a refusal stopped the recorder)."""
        if self.task.done():
            return
        idle = asyncio.ensure_future(self._idle.wait())
        try:
            await asyncio.wait({idle, self.task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            idle.cancel()

    async def close(self) -> bool:
        """Store what is still queued; tell whether every event was stored."""
        self._closing = True
        self._wake.set()
        return await self.task

    async def _write(self) -> bool:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                batch = self._pending[: self._most]
                del self._pending[: len(batch)]
                if not await self._store(batch):
                    return False  # refused: the run was ended for it
            self._idle.set()
            if self._closing:
                return True
