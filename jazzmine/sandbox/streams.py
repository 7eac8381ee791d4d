"""A sandbox's output as chunks of its two streams, read under a deadline and a byte cap.

Every way of reading a sandbox (the harness protocol of a run, a one-shot container's plain
output) goes through `CappedReader`, so the wall clock and the output cap are one loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Literal

Stream = Literal["stdout", "stderr"]
Chunk = tuple[Stream, bytes]


class Cut(Exception):
    """Reading stopped before the sandbox ended: the caller must kill it."""


class TimedOut(Cut):
    """The deadline passed before the sandbox ended."""


class OutputLimited(Cut):
    """The sandbox printed more than the cap allows."""


class CappedReader:
    """Read chunks from a source until it ends, the deadline passes or the cap is exceeded."""

    def __init__(
        self, read: Callable[[], Awaitable[Chunk | None]], *, deadline: float, max_bytes: int
    ) -> None:
        self._read = read
        self.deadline = deadline
        self.max_bytes = max_bytes
        self.total = 0

    async def read(self) -> Chunk | None:
        """Return the next chunk, or None at the end; raise `TimedOut` or `OutputLimited`."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimedOut
        # `asyncio.timeout`, not `wait_for`: on Python 3.11 `wait_for` returns a chunk that
        # arrives together with a cancel and drops the cancel, so a cancelled run went on
        # reading its sandbox until its own deadline.
        try:
            async with asyncio.timeout(remaining):
                item = await self._read()
        except TimeoutError:
            raise TimedOut from None
        if item is None:
            return None
        self.total += len(item[1])
        if self.total > self.max_bytes:
            raise OutputLimited
        return item
