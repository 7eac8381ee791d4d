"""A build log's socket opened on another team's build is refused before it joins the build's
group: it never hears that team's lines, and its consumer ends cleanly however busy the build.

The socket used to join the group first and read the build after (to miss no line of a build
it may see). For a build it may not see, the lines that arrived in between stayed queued on
its channel after the refusal, and each one was handled by a consumer that never set up its
stream: `AttributeError: 'BuildLogConsumer' object has no attribute 'access'`, a traceback in
the server's log for every such handshake while someone of that team watched the build in the
same process (94 of 100 handshakes).
"""

from __future__ import annotations

import asyncio
from asyncio import FIRST_COMPLETED
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from jazzmine_web.asgi import application
from jazzmine_web.catalog.consumers import CLOSE_NOT_FOUND
from jazzmine_web.catalog.live import build_group
from jazzmine_web.catalog.services import image_build_start
from tests.web.helpers import rival_team, ws_headers

pytestmark = pytest.mark.django_db(transaction=True)

MARK = "RIVAL-7731-not-for-you"
HANDSHAKES = 20


@database_sync_to_async
def rivals_busy_build() -> tuple[Any, Any]:
    """Another team's build, started by its admin rex; return (build, rex)."""
    _team, rex, sandbox, _token = rival_team(MARK)
    return image_build_start(sandbox=sandbox, user=rex, background=False), rex


async def _next_output(ws: WebsocketCommunicator, timeout: float) -> dict[str, Any] | None:
    """Return what the socket sends next (None if nothing in `timeout`); raise what the consumer
    raised as soon as it does (the communicator's own receive would cancel it instead)."""
    getter = asyncio.ensure_future(ws.output_queue.get())
    await asyncio.wait({getter, ws.future}, timeout=timeout, return_when=FIRST_COMPLETED)
    if getter.done():
        return getter.result()
    getter.cancel()
    if ws.future.done():
        ws.future.result()  # the consumer's exception
    return None


async def test_a_refused_build_socket_hears_nothing_of_a_busy_build(member, ecommerce):
    build, rex = await rivals_busy_build()
    # Rex watches his build from the same server process, so its group is subscribed here.
    rex_ws = WebsocketCommunicator(
        application,
        f"/ws/builds/{build.pk}/",
        headers=await database_sync_to_async(ws_headers)(rex),
    )
    assert (await rex_ws.connect(timeout=5))[0]
    layer = get_channel_layer()
    busy = True

    async def lines() -> None:
        seq = 1_000
        while busy:
            seq += 1
            line = {"type": "build.line", "seq": seq, "line": MARK}
            await layer.group_send(build_group(build.pk), line)
            await asyncio.sleep(0)

    sender = asyncio.ensure_future(lines())
    headers = await database_sync_to_async(ws_headers)(member)
    problems: list[str] = []
    try:
        for attempt in range(HANDSHAKES):
            ws = WebsocketCommunicator(application, f"/ws/builds/{build.pk}/", headers=headers)
            await ws.send_input({"type": "websocket.connect"})
            try:
                answer = await _next_output(ws, timeout=5)
                if answer != {"type": "websocket.close", "code": CLOSE_NOT_FOUND}:
                    problems.append(f"{attempt}: answered {answer!r}"[:200])
                # Lines keep arriving meanwhile: the refused socket must neither send nor fail.
                more = await _next_output(ws, timeout=0.2)
                if more is not None:
                    problems.append(f"{attempt}: then sent {more!r}"[:200])
                await ws.send_input({"type": "websocket.disconnect", "code": 1000})
                await ws.wait(timeout=2)
            except Exception as exc:  # raised by the consumer: a traceback in the server's log
                problems.append(f"{attempt}: the consumer raised {exc!r}"[:200])
    finally:
        busy = False
        await sender
        await rex_ws.disconnect()
    assert not problems, "\n".join(problems)
