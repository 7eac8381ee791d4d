"""Live messages are Redis pub/sub and can be lost while a web process reconnects. A build's
log page fills a gap in its lines from the stored log, and after a silence reads the build, so
a lost end still brings the Build button back."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.db.models import F, Value
from django.db.models.functions import Concat
from django.utils import timezone

from jazzmine_web.catalog import live as catalog_live
from jazzmine_web.catalog.models import BuildStatus, ImageBuild
from jazzmine_web.catalog.services import image_build_append_line, image_build_start
from jazzmine_web.studio import live

from .test_build_log_websocket import communicator_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def build(ecommerce, member):
    build = image_build_start(sandbox=ecommerce, user=member, background=False)
    image_build_append_line(build_id=build.pk, line="line 1")
    return build


@database_sync_to_async
def stored_silently(build_id: int, lines: list[str], *, end: bool = False) -> None:
    """Store lines (and the end) the way a build does, but let no message out."""
    for line in lines:
        ImageBuild.objects.filter(pk=build_id).update(
            log=Concat(F("log"), Value(line + "\n")), line_count=F("line_count") + 1
        )
    if end:
        ImageBuild.objects.filter(pk=build_id).update(
            status=BuildStatus.SUCCEEDED, tag="t", finished_at=timezone.now()
        )


async def connected(client, member, build):
    await database_sync_to_async(client.force_login)(member)
    communicator = communicator_for(client, build.pk)
    ok, _ = await communicator.connect()
    assert ok
    assert 'data-seq="1"' in await communicator.receive_from()
    return communicator


async def test_a_build_whose_last_messages_were_lost_still_ends_on_the_page(
    client, member, build, monkeypatch
):
    monkeypatch.setattr(live, "SILENCE_SECONDS", 0.5)
    communicator = await connected(client, member, build)
    try:
        await stored_silently(build.pk, ["line 2", "line 3"], end=True)
        snapshot = await communicator.receive_from(timeout=5)
        closed = await communicator.receive_output(timeout=5)
    finally:
        await communicator.disconnect()
    assert all(f'data-seq="{n}"' in snapshot for n in (1, 2, 3))
    assert 'id="build-status" hx-swap-oob="true">Built' in snapshot
    assert closed["type"] == "websocket.close"


async def test_a_gap_in_the_lines_is_filled_from_the_stored_log(client, member, build):
    communicator = await connected(client, member, build)
    try:
        # Line 2 was stored but its message was lost; line 3's message arrives.
        await stored_silently(build.pk, ["line 2", "line 3"])
        await get_channel_layer().group_send(
            catalog_live.build_group(build.pk),
            {"type": "build.line", "build_id": build.pk, "seq": 3, "line": "line 3"},
        )
        html = await communicator.receive_from(timeout=5)
        assert await communicator.receive_nothing(timeout=0.3)
    finally:
        await communicator.disconnect()
    # The whole stored log, in order, replaces the page's (no line twice, none missing).
    assert 'id="build-log" class="build-log" hx-swap-oob="true"' in html
    assert html.index('data-seq="1"') < html.index('data-seq="2"') < html.index('data-seq="3"')
