"""Fixtures for run tests: the catalog's team and demo sandbox, a live worker, websocket auth."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.web.catalog.conftest import ecommerce, member, outsider, team  # noqa: F401


@pytest.fixture
def worker(celery_worker, transactional_db):
    """Give the test the session's running Celery worker (a separate process).

    Afterwards the runs the test left running are cancelled, so that the worker is free
    for the next test (their rows are about to be flushed).
    """
    from tests.workers import Workers, runs_stop_unfinished

    yield Workers(celery_worker)
    runs_stop_unfinished()


def ws_headers(user) -> list[tuple[bytes, bytes]]:
    """Return the headers of a logged-in browser's websocket handshake."""
    client = Client()
    client.force_login(user)
    cookie = f"sessionid={client.cookies['sessionid'].value}"
    return [(b"cookie", cookie.encode()), (b"origin", b"http://localhost")]
