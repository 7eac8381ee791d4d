"""Fixtures for run tests: the catalog's team and demo sandbox, a live worker, websocket auth."""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.runs.executor import executor_shutdown
from tests.web.catalog.conftest import ecommerce, member, outsider, team  # noqa: F401


@pytest.fixture
def worker():
    """Give the test the process's run worker and stop it (and its pools) afterwards."""
    from jazzmine_web.runs.executor import executor

    yield executor()
    executor_shutdown()


def ws_headers(user) -> list[tuple[bytes, bytes]]:
    """Return the headers of a logged-in browser's websocket handshake."""
    client = Client()
    client.force_login(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    return [(b"cookie", cookie.encode()), (b"origin", b"http://localhost")]
