"""An open event stream or long-poll ends as soon as its API token is revoked."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from django.db import connection
from django.test import AsyncClient

from jazzmine_web.teams.services import api_token_revoke

from .conftest import submit

pytestmark = pytest.mark.django_db(transaction=True)


def revoke_later(member, issued, delay: float = 0.5) -> threading.Thread:
    def revoke() -> None:
        time.sleep(delay)
        try:
            api_token_revoke(user=member, token_id=issued.token.pk)
        finally:
            connection.close()

    thread = threading.Thread(target=revoke)
    thread.start()
    return thread


def test_an_open_event_stream_ends_with_a_line_saying_the_token_was_revoked(
    api, issued, ecommerce, member
) -> None:
    state = submit(api, ecommerce).json()  # pending: the stream would stay open for minutes

    async def read() -> list[dict]:
        response = await AsyncClient().get(
            f"/api/v1/submissions/{state['id']}/events/",
            headers={"Authorization": f"Bearer {issued.raw}"},
        )
        assert response.status_code == 200
        lines = []
        async for chunk in response.streaming_content:
            lines += [json.loads(x) for x in chunk.decode().splitlines() if x]
        return lines

    thread = revoke_later(member, issued)
    started = time.monotonic()
    lines = asyncio.run(asyncio.wait_for(read(), timeout=20))
    thread.join()
    assert time.monotonic() - started < 10
    assert lines[0]["type"] == "submission"
    assert lines[-1]["type"] == "end" and lines[-1]["reason"] == "token_revoked"
    assert "revoked" in lines[-1]["message"]


def test_a_long_poll_ends_when_its_token_is_revoked(api, ecommerce, member, issued) -> None:
    state = submit(api, ecommerce).json()
    thread = revoke_later(member, issued)
    started = time.monotonic()
    response = api.get(f"/api/v1/submissions/{state['id']}/wait/?timeout=20")
    thread.join()
    assert time.monotonic() - started < 10
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "token_revoked"


def test_a_revoked_token_cannot_open_a_new_stream(api, ecommerce, member, issued) -> None:
    state = submit(api, ecommerce).json()
    api_token_revoke(user=member, token_id=issued.token.pk)
    response = api.get(f"/api/v1/submissions/{state['id']}/events/")
    assert response.status_code == 401
