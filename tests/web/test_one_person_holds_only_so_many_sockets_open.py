"""One person holds only so many websockets open at once in one web process.

Each open socket of an unfinished run holds a channel-layer subscription and reads the
database every few seconds, on the one thread every socket's database calls share: one
account opening sockets by the thousand slowed every other person's live pages. Past the cap
a handshake is refused before any consumer runs; a closed socket frees its place.
"""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings

from jazzmine_web.asgi import application
from tests.web.helpers import teammate, ws_headers

pytestmark = pytest.mark.django_db(transaction=True)

CAP = 3
PATH = "/ws/reviews/queue/"


async def _open(headers) -> tuple[WebsocketCommunicator, bool]:
    ws = WebsocketCommunicator(application, PATH, headers=headers)
    connected, _ = await ws.connect(timeout=5)
    return ws, connected


def test_sockets_past_the_cap_are_refused_and_a_closed_one_frees_its_place(
    monkeypatch, team, member
) -> None:
    monkeypatch.setattr(settings, "JAZZMINE_MAX_SOCKETS_PER_USER", CAP)
    other = teammate(team, "member", username="lin")

    async def scenario() -> tuple[list[bool], bool, bool, bool]:
        mine = await database_sync_to_async(ws_headers)(member)
        theirs = await database_sync_to_async(ws_headers)(other)
        held = [await _open(mine) for _ in range(CAP)]
        _extra, refused = await _open(mine)
        # Another person is not counted with them.
        elsewhere, connected_elsewhere = await _open(theirs)
        await held[0][0].disconnect()
        await asyncio.sleep(0.1)  # the closed socket's consumer ends
        again, reconnected = await _open(mine)
        for ws, connected in [*held[1:], (elsewhere, connected_elsewhere), (again, reconnected)]:
            if connected:
                await ws.disconnect()
        return [c for _, c in held], refused, connected_elsewhere, reconnected

    held, refused, elsewhere, again = asyncio.run(scenario())
    assert held == [True] * CAP
    assert refused is False
    assert elsewhere is True
    assert again is True
