"""The navigation badge of any page follows the count over a socket that sends counts only."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from jazzmine_web.asgi import application
from jazzmine_web.reviews.services import submission_create, submission_reject
from tests.web.helpers import ws_headers

from .conftest import BODY

pytestmark = pytest.mark.django_db(transaction=True)

headers_for = database_sync_to_async(ws_headers)


async def test_the_badge_socket_sends_the_count_as_it_changes(ecommerce, member, reviewer):
    ws = WebsocketCommunicator(
        application, "/ws/reviews/queue/?badge=1", headers=await headers_for(reviewer)
    )
    connected, _ = await ws.connect()
    assert connected
    try:
        assert await ws.receive_json_from(timeout=5) == {"type": "count", "count": 0}
        submission = await database_sync_to_async(submission_create)(
            sandbox=ecommerce, user=member, token=None, task="Total", body=BODY
        )
        assert await ws.receive_json_from(timeout=5) == {"type": "count", "count": 1}
        await database_sync_to_async(submission_reject)(
            submission=submission, user=reviewer, feedback="no"
        )
        assert await ws.receive_json_from(timeout=5) == {"type": "count", "count": 0}
    finally:
        await ws.disconnect()


async def test_the_badge_socket_refuses_strangers():
    ws = WebsocketCommunicator(application, "/ws/reviews/queue/?badge=1")
    connected, code = await ws.connect()
    assert not connected or code == 4403
    await ws.disconnect()


def test_every_page_loads_the_badge_script(logged_in) -> None:
    html = logged_in.get("/catalog/").content.decode()
    assert "studio/review-badge.js" in html and "data-review-badge" in html
