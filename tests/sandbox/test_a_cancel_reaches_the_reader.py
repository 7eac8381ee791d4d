"""A cancelled read of a sandbox's output stops, whenever the next chunk arrives.

Cancelling a run cancels the task reading its sandbox. With `asyncio.wait_for` under the read,
Python 3.11 returned a chunk that arrived with the cancel and dropped the cancel: the run went
on reading a spinning script until its own deadline.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from jazzmine.sandbox.streams import CappedReader, TimedOut


async def reads_until_cancelled(steps_before_cancel: int) -> bool:
    """Cancel a reader `steps_before_cancel` loop steps after a chunk arrived; True if it stopped."""
    chunks: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
    reader = CappedReader(chunks.get, deadline=time.monotonic() + 30, max_bytes=10**9)

    async def read_forever() -> None:
        while True:
            await reader.read()

    task = asyncio.create_task(read_forever())
    for _ in range(3):
        await asyncio.sleep(0)  # the reader is waiting for a chunk
    chunks.put_nowait(("stdout", b"x\n"))
    for _ in range(steps_before_cancel):
        await asyncio.sleep(0)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=0.5)
    if not done:  # the cancel was dropped: stop it for good before failing
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return False
    return task.cancelled()


@pytest.mark.parametrize("steps", range(8))
async def test_a_cancel_that_comes_with_a_chunk_stops_the_reader(steps):
    assert await reads_until_cancelled(steps), f"the cancel {steps} step(s) after a chunk was lost"


async def test_the_deadline_still_cuts_a_silent_sandbox():
    silent: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
    reader = CappedReader(silent.get, deadline=time.monotonic() + 0.2, max_bytes=10)
    started = time.monotonic()
    with pytest.raises(TimedOut):
        await reader.read()
    assert 0.15 < time.monotonic() - started < 2


async def test_a_cancel_of_a_silent_read_is_a_cancel_not_a_timeout():
    silent: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
    reader = CappedReader(silent.get, deadline=time.monotonic() + 30, max_bytes=10)
    task = asyncio.create_task(reader.read())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
