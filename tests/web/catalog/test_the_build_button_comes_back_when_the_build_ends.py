"""The Build button is disabled while a build runs and comes back, live, when it ends."""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from jazzmine_web.asgi import application
from jazzmine_web.catalog.models import BuildStatus
from jazzmine_web.catalog.services import image_build_set_status, image_build_start

pytestmark = pytest.mark.django_db(transaction=True)

BUTTON = re.compile(r'<button type="submit" id="build-button"[^>]*>Build</button>')


def button(html: str) -> str:
    match = BUTTON.search(html)
    assert match, html
    return match.group(0)


async def follow(client, member, build_id: int) -> WebsocketCommunicator:
    await database_sync_to_async(client.force_login)(member)
    headers = [
        (b"origin", b"http://localhost"),
        (b"host", b"localhost"),
        (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()),
    ]
    ws = WebsocketCommunicator(application, f"/ws/builds/{build_id}/", headers=headers)
    connected, _ = await ws.connect()
    assert connected
    return ws


@pytest.mark.parametrize("ending", [BuildStatus.SUCCEEDED, BuildStatus.FAILED])
async def test_the_last_fragment_enables_the_button_whatever_the_ending(
    client, member, ecommerce, ending
) -> None:
    build = await database_sync_to_async(image_build_start)(
        sandbox=ecommerce, user=member, background=False
    )
    await database_sync_to_async(client.force_login)(member)
    page = await database_sync_to_async(client.get)(f"/catalog/sandboxes/{ecommerce.pk}/")
    assert "disabled" in button(page.content.decode())  # the page as loaded mid-build

    ws = await follow(client, member, build.pk)
    try:
        snapshot = await ws.receive_from()
        assert "disabled" in button(snapshot)  # still building when the socket opened
        await database_sync_to_async(image_build_set_status)(build_id=build.pk, status=ending)
        final = await ws.receive_from()
        # Swapped in place by htmx (out of band): enabled, whatever the ending.
        assert button(final) == (
            '<button type="submit" id="build-button" hx-swap-oob="true">Build</button>'
        )
        assert (await ws.receive_output())["type"] == "websocket.close"
    finally:
        await ws.disconnect()


async def test_a_socket_opened_after_the_end_gets_an_enabled_button(
    client, member, ecommerce
) -> None:
    build = await database_sync_to_async(image_build_start)(
        sandbox=ecommerce, user=member, background=False
    )
    await database_sync_to_async(image_build_set_status)(
        build_id=build.pk, status=BuildStatus.FAILED
    )
    ws = await follow(client, member, build.pk)
    try:
        snapshot = await ws.receive_from()
        assert "disabled" not in button(snapshot)
        assert 'id="image-status-badge" hx-swap-oob="true"' in snapshot
    finally:
        await ws.disconnect()
