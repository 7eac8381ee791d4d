from __future__ import annotations

import asyncio
import threading

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connection
from django.db.models import F, Value
from django.db.models.functions import Concat

from jazzmine_web.asgi import application
from jazzmine_web.catalog.models import BuildStatus, ImageBuild
from jazzmine_web.catalog.services import (
    image_build_append_line,
    image_build_run,
    image_build_set_status,
    image_build_start,
)

pytestmark = pytest.mark.django_db(transaction=True)


def communicator_for(client, build_id: int) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://localhost"), (b"host", b"localhost")]
    if "sessionid" in client.cookies:
        headers.append((b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()))
    return WebsocketCommunicator(application, f"/ws/builds/{build_id}/", headers=headers)


@pytest.fixture
def build(ecommerce, member):
    build = image_build_start(sandbox=ecommerce, user=member, background=False)
    image_build_append_line(build_id=build.pk, line="building for sandbox 'ecommerce'")
    return build


async def test_it_sends_the_log_so_far_then_each_new_line_then_the_status(
    client, member, build
) -> None:
    await database_sync_to_async(client.force_login)(member)
    communicator = communicator_for(client, build.pk)
    try:
        connected, _ = await communicator.connect()
        assert connected
        snapshot = await communicator.receive_from()
        assert (
            'id="build-log"' in snapshot
            and "building for sandbox &#x27;ecommerce&#x27;" in snapshot
        )
        assert 'data-seq="1"' in snapshot

        await database_sync_to_async(image_build_append_line)(
            build_id=build.pk, line="Step 1/4 : <FROM>"
        )
        line = await communicator.receive_from()
        assert 'hx-swap-oob="beforeend"' in line and 'data-seq="2"' in line
        assert "Step 1/4 : &lt;FROM&gt;" in line

        await database_sync_to_async(image_build_set_status)(
            build_id=build.pk, status=BuildStatus.SUCCEEDED, tag="t"
        )
        status = await communicator.receive_from()
        assert 'id="build-status" hx-swap-oob="true">Built' in status
        assert "badge-up_to_date" in status
        closed = await communicator.receive_output()
        assert closed["type"] == "websocket.close"
    finally:
        await communicator.disconnect()


async def test_lines_from_a_build_on_another_thread_stream_live(client, member, ecommerce) -> None:
    go = threading.Event()

    class SlowBuilder:
        def __init__(self, registry) -> None:
            self.registry = registry

        def ensure_image(self, name, *, on_log, interrupt=None):
            go.wait(10)
            for i in range(3):
                on_log(f"line {i} of {name}")
            return type("R", (), {"tag": "jazzmine/sandbox-x:1", "built": True, "seconds": 0.1})()

    await database_sync_to_async(client.force_login)(member)
    build = await database_sync_to_async(image_build_start)(
        sandbox=ecommerce, user=member, background=False
    )

    def build_elsewhere() -> None:  # what a worker does with the queued build
        try:
            image_build_run(build_id=build.pk, builder_factory=SlowBuilder)
        finally:
            connection.close()

    threading.Thread(target=build_elsewhere, daemon=True).start()
    communicator = communicator_for(client, build.pk)
    try:
        assert (await communicator.connect())[0]
        await communicator.receive_from()  # the snapshot
        go.set()
        received = ""
        while 'id="build-status" hx-swap-oob="true">Built' not in received:
            received += await communicator.receive_from(timeout=10)
        for i in range(3):
            assert f"line {i} of ecommerce" in received
    finally:
        await communicator.disconnect()
    stored = await database_sync_to_async(ImageBuild.objects.get)(pk=build.pk)
    assert stored.status == BuildStatus.SUCCEEDED and "line 2 of ecommerce" in stored.log


def _store_without_sending(build_id: int, line: str) -> None:
    """A line stored whose message never arrived (the layer was reconnecting)."""
    ImageBuild.objects.filter(pk=build_id).update(
        log=Concat(F("log"), Value(line + "\n")), line_count=F("line_count") + 1
    )


@pytest.mark.parametrize(
    "status", [BuildStatus.SUCCEEDED, BuildStatus.FAILED, BuildStatus.BUILDING]
)
async def test_lines_lost_on_the_way_come_with_the_next_status(
    client, member, build, status
) -> None:
    await database_sync_to_async(client.force_login)(member)
    communicator = communicator_for(client, build.pk)
    try:
        assert (await communicator.connect())[0]
        await communicator.receive_from()  # the snapshot
        for i in range(2):
            await database_sync_to_async(_store_without_sending)(build.pk, f"lost {i} <x>")
        await database_sync_to_async(image_build_set_status)(build_id=build.pk, status=status)
        received = await communicator.receive_from()
        assert 'id="build-log" class="build-log" hx-swap-oob="true"' in received
        for seq, line in ((1, "building for sandbox"), (2, "lost 0 &lt;x&gt;"), (3, "lost 1")):
            assert f'data-seq="{seq}">{line}' in received
        assert f'id="build-status" hx-swap-oob="true">{status.label}' in received
        if status == BuildStatus.BUILDING:
            # Sent once: the next line follows on, and the same status twice sends no log.
            await database_sync_to_async(image_build_append_line)(build_id=build.pk, line="on")
            line = await communicator.receive_from()
            assert 'hx-swap-oob="beforeend"' in line and 'data-seq="4">on' in line
            await database_sync_to_async(image_build_set_status)(build_id=build.pk, status=status)
            again = await communicator.receive_from()
            assert "build-log" not in again
        else:
            assert (await communicator.receive_output())["type"] == "websocket.close"
    finally:
        await communicator.disconnect()


async def test_it_refuses_anonymous_visitors(client, build) -> None:
    communicator = communicator_for(client, build.pk)
    try:
        connected, code = await communicator.connect()
        assert not connected and code == 4401
    finally:
        await communicator.disconnect()


async def test_it_refuses_someone_elses_build(client, outsider, build) -> None:
    await database_sync_to_async(client.force_login)(outsider)
    communicator = communicator_for(client, build.pk)
    try:
        connected, code = await communicator.connect()
        assert not connected and code == 4404
    finally:
        await communicator.disconnect()
    await asyncio.sleep(0)
