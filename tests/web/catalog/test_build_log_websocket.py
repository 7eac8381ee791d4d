from __future__ import annotations

import asyncio
import threading

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connection

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
        assert 'id="build-status" hx-swap-oob="true">Up to date' in status
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
        while "Up to date" not in received:
            received += await communicator.receive_from(timeout=10)
        for i in range(3):
            assert f"line {i} of ecommerce" in received
    finally:
        await communicator.disconnect()
    stored = await database_sync_to_async(ImageBuild.objects.get)(pk=build.pk)
    assert stored.status == BuildStatus.SUCCEEDED and "line 2 of ecommerce" in stored.log


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
