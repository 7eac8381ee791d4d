"""A socket that asks for a long run's stored events (a run page opening or reconnecting with
`?after=0`, a playground `follow`) gets them without freezing the web process: the replay is
rendered off the event loop, which every other socket and request of the process waits on."""

from __future__ import annotations

import asyncio
import gc
import json
import re
import time
from collections.abc import AsyncIterator

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from jazzmine_web.asgi import application
from jazzmine_web.runs.models import Run, RunEvent
from jazzmine_web.runs.services import run_create
from tests.web.helpers import playground_socket, run_socket, ws_headers

pytestmark = pytest.mark.django_db(transaction=True)

# A run this long replays in about two seconds of CPU here; the most a run may send is 100000.
EVENTS = 30_000
# How long the loop may go without turning while the replay is made (it turns every 10 ms).
STALL_SECONDS = 0.5


@database_sync_to_async
def long_run(ecommerce, member) -> Run:
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    now = time.time()
    RunEvent.objects.bulk_create(
        [
            RunEvent(
                run=run, seq=seq, type="log", data={"message": f"line {seq} " + "x" * 80}, ts=now
            )
            for seq in range(1, EVENTS + 1)
        ],
        batch_size=5000,
    )
    return run


class LoopStall:
    """The longest time the event loop went without running a waiting task."""

    def __init__(self) -> None:
        self.worst = 0.0

    async def watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(0.01)
            self.worst = max(self.worst, loop.time() - before - 0.01)


@pytest.fixture
async def stall() -> AsyncIterator[LoopStall]:
    # What the suite made before this test is the test process's, not the server's: a full
    # collection walks all of it (0.6 s late in the suite). The server keeps its own start-up
    # heap out of full collections (asgi.py); so does this test with the suite's.
    gc.freeze()
    found = LoopStall()
    task = asyncio.ensure_future(found.watch())
    await asyncio.sleep(0.05)
    yield found
    task.cancel()
    gc.unfreeze()


async def test_a_run_page_socket_replays_a_long_run_without_stalling_the_loop(
    ecommerce, member, stall
) -> None:
    run = await long_run(ecommerce, member)
    stall.worst = 0.0
    ws = await run_socket(run, member)  # past the replay: every event, as one frame
    await ws.disconnect()
    assert stall.worst < STALL_SECONDS, f"the loop stood still for {stall.worst:.2f} s"


async def test_a_playground_follow_replays_a_long_run_without_stalling_the_loop(
    ecommerce, member, stall
) -> None:
    run = await long_run(ecommerce, member)
    ws = await playground_socket(member, timeout=10)
    try:
        stall.worst = 0.0
        await ws.send_json_to({"type": "follow", "run_id": str(run.pk), "after": 0})
        frames = []
        while f'data-seq="{EVENTS}"' not in (frames[-1]["html"] if frames else ""):
            frames.append(await ws.receive_json_from(timeout=60))
            assert frames[-1]["type"] == "run_html", frames[-1]
    finally:
        await ws.disconnect()
    assert stall.worst < STALL_SECONDS, f"the loop stood still for {stall.worst:.2f} s"
    assert_fits_and_whole([json.dumps(frame) for frame in frames])


# daphne sends at most 1 MiB a frame (autobahn's payload limit): a replay in one frame of
# megabytes was never sent, and the socket ended with it, each time the page reconnected.
FRAME_LIMIT = 1024 * 1024


def assert_fits_and_whole(frames: list[str]) -> None:
    assert all(len(frame.encode()) < FRAME_LIMIT for frame in frames), [len(f) for f in frames]
    seqs = [int(seq) for frame in frames for seq in re.findall(r'data-seq=\\?"(\d+)', frame)]
    assert seqs == list(range(1, EVENTS + 1)), (len(seqs), seqs[:3], seqs[-3:])


async def test_a_run_page_socket_replays_a_long_run_in_frames_that_fit(ecommerce, member) -> None:
    run = await long_run(ecommerce, member)
    headers = await database_sync_to_async(ws_headers)(member)
    ws = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=headers)
    assert (await ws.connect())[0]
    try:
        frames = [await ws.receive_from(timeout=60)]
        while "data-run-status" not in frames[-1]:
            frames.append(await ws.receive_from(timeout=60))
    finally:
        await ws.disconnect()
    assert_fits_and_whole(frames)


async def test_one_line_of_megabytes_is_shown_cut_in_a_frame_that_fits(ecommerce, member) -> None:
    @database_sync_to_async
    def huge_line() -> Run:
        run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
        data = {"message": "<" * 3_000_000}  # escaped, 12 MB of markup
        RunEvent.objects.create(run=run, seq=1, type="log", data=data, ts=time.time())
        return run

    run = await huge_line()
    headers = await database_sync_to_async(ws_headers)(member)
    ws = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=headers)
    assert (await ws.connect())[0]
    try:
        frame = await ws.receive_from(timeout=60)
    finally:
        await ws.disconnect()
    assert len(frame.encode()) < FRAME_LIMIT
    assert "2,900,000 more characters not shown here" in frame
