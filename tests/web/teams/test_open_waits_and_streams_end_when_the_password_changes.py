"""A long poll or an event stream open with a token ends when its owner's password changes.

They are what an agent holding a token minted from a stolen session keeps open: the change
revokes the token through the service, so they end at once, as on a revoke, saying why.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import AsyncClient, Client

from jazzmine_web.teams.services import api_token_create

pytestmark = pytest.mark.django_db(transaction=True)

NEW = "violet-harbour-57-kettles"
BODY = 'emit_result({"hello": "world"})\n'


def submitted(client: Client, sandbox) -> str:
    """Submit a script that waits for a person: its wait and stream stay open for minutes."""
    payload = {"sandbox": sandbox.pk, "task": "Say hello", "body": BODY}
    response = client.post("/api/v1/submissions/", payload, content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def change_password_later(user_id: int, delay: float = 0.5) -> threading.Thread:
    def change() -> None:
        time.sleep(delay)
        try:
            user = get_user_model().objects.get(pk=user_id)
            user.set_password(NEW)
            user.save()
        finally:
            connection.close()

    thread = threading.Thread(target=change)
    thread.start()
    return thread


def test_a_long_poll_ends_when_the_password_changes(member, ecommerce) -> None:
    api = Client(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=member, name='a').raw}")
    submission = submitted(api, ecommerce)
    thread = change_password_later(member.pk)
    started = time.monotonic()
    response = api.get(f"/api/v1/submissions/{submission}/wait/?timeout=15")
    thread.join()
    # A recheck every few seconds would see it too; the revoke wakes the poll at once.
    assert time.monotonic() - started < 4
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "token_revoked"


def test_an_event_stream_ends_when_the_password_changes(member, ecommerce) -> None:
    raw = api_token_create(user=member, name="a").raw
    submission = submitted(Client(HTTP_AUTHORIZATION=f"Bearer {raw}"), ecommerce)

    async def read() -> list[dict]:
        response = await AsyncClient().get(
            f"/api/v1/submissions/{submission}/events/",
            headers={"Authorization": f"Bearer {raw}"},
        )
        assert response.status_code == 200
        lines = []
        async for chunk in response.streaming_content:
            lines += [json.loads(x) for x in chunk.decode().splitlines() if x]
        return lines

    thread = change_password_later(member.pk)
    started = time.monotonic()
    lines = asyncio.run(asyncio.wait_for(read(), timeout=20))
    thread.join()
    assert time.monotonic() - started < 4
    assert lines[0]["type"] == "submission"
    assert lines[-1]["type"] == "end" and lines[-1]["reason"] == "token_revoked"
