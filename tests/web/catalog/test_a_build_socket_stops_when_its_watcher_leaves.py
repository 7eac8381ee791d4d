"""A build log's socket is checked for as long as it is open, not only when it connects: someone
taken out of the sandbox's team stops receiving a busy build's lines at the next one (within a
second, as a run socket), and their socket closes as one for a build they may not see."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from jazzmine_web.asgi import application
from jazzmine_web.catalog.consumers import CLOSE_NOT_FOUND
from jazzmine_web.catalog.models import BuildStatus
from jazzmine_web.catalog.services import (
    image_build_append_line,
    image_build_set_status,
    image_build_start,
)
from jazzmine_web.studio import live
from jazzmine_web.teams.models import Membership, Role
from jazzmine_web.teams.services import membership_remove, membership_set, team_create
from tests.web.helpers import ws_headers

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def every_line_rechecks(monkeypatch):
    # The socket relies on each check for a second; a test need not wait that long.
    monkeypatch.setattr(live, "ACCESS_RECHECK_SECONDS", 0.0)


@database_sync_to_async
def started_build(ecommerce, member):
    return image_build_start(sandbox=ecommerce, user=member, background=False)


async def build_socket(build, user) -> WebsocketCommunicator:
    """Return the build's socket, connected as the user's browser, past the log so far."""
    headers = await database_sync_to_async(ws_headers)(user)
    ws = WebsocketCommunicator(application, f"/ws/builds/{build.pk}/", headers=headers)
    connected, _ = await ws.connect()
    assert connected
    await ws.receive_from(timeout=5)  # the snapshot
    return ws


@database_sync_to_async
def removed_from_the_team(team, user) -> None:
    membership_remove(team=team, user=user)


@database_sync_to_async
def moved_to_another_team(team, user) -> None:
    Membership.objects.filter(user=user).delete()
    membership_set(team=team_create(name="Other", slug="other"), user=user, role=Role.ADMIN)


append = database_sync_to_async(image_build_append_line)


async def closed_without_lines(ws) -> bool:
    """Tell whether the socket closed as for an unknown build, having sent no line first."""
    output = await ws.receive_output(timeout=5)
    return output == {"type": "websocket.close", "code": CLOSE_NOT_FOUND}


@pytest.mark.parametrize("lose_access", [removed_from_the_team, moved_to_another_team])
async def test_a_busy_builds_next_line_closes_the_socket_of_someone_who_left(
    lose_access, ecommerce, member, team
):
    build = await started_build(ecommerce, member)
    ws = await build_socket(build, member)
    try:
        await append(build_id=build.pk, line="while she may see it")
        assert "while she may see it" in await ws.receive_from(timeout=5)
        await lose_access(team, member)
        await append(build_id=build.pk, line="secret line")
        assert await closed_without_lines(ws)
    finally:
        await ws.disconnect()


async def test_the_builds_end_closes_the_socket_of_someone_who_left(ecommerce, member, team):
    build = await started_build(ecommerce, member)
    ws = await build_socket(build, member)
    try:
        await removed_from_the_team(team, member)
        await database_sync_to_async(image_build_set_status)(
            build_id=build.pk, status=BuildStatus.SUCCEEDED
        )
        assert await closed_without_lines(ws)
    finally:
        await ws.disconnect()


async def test_a_member_still_in_the_team_keeps_receiving_lines(ecommerce, member):
    build = await started_build(ecommerce, member)
    ws = await build_socket(build, member)
    try:
        for n in range(3):
            await append(build_id=build.pk, line=f"step {n}")
            assert f"step {n}" in await ws.receive_from(timeout=5)
    finally:
        await ws.disconnect()
