from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_reject

from .conftest import submit

pytestmark = pytest.mark.django_db(transaction=True)


def test_wait_answers_after_its_timeout_when_nobody_decides(api, ecommerce) -> None:
    state = submit(api, ecommerce).json()
    started = time.monotonic()
    waited = api.get(f"/api/v1/submissions/{state['id']}/wait/?timeout=0.6").json()
    elapsed = time.monotonic() - started
    assert waited["timed_out"] is True and waited["status"] == "pending"
    assert 0.5 <= elapsed < 3


def test_wait_returns_as_soon_as_a_reviewer_decides(api, ecommerce, reviewer) -> None:
    state = submit(api, ecommerce).json()

    def decide_later() -> None:
        time.sleep(0.5)
        try:
            submission_reject(
                submission=Submission.objects.get(pk=state["id"]),
                user=reviewer,
                feedback="Not today.",
            )
        finally:
            connection.close()

    thread = threading.Thread(target=decide_later)
    started = time.monotonic()
    thread.start()
    waited = api.get(f"/api/v1/submissions/{state['id']}/wait/?timeout=20").json()
    elapsed = time.monotonic() - started
    thread.join()
    assert waited["timed_out"] is False
    assert waited["status"] == "rejected" and waited["final"] is True
    assert "Not today." in waited["previous_error"]
    assert elapsed < 5


def test_wait_answers_at_once_for_a_final_submission(api, ecommerce) -> None:
    state = submit(api, ecommerce, body="import os\n").json()
    started = time.monotonic()
    waited = api.get(f"/api/v1/submissions/{state['id']}/wait/?timeout=20").json()
    assert waited["status"] == "rejected_by_validator" and waited["timed_out"] is False
    assert time.monotonic() - started < 2


def test_wait_caps_the_timeout(api, ecommerce, settings) -> None:
    settings.JAZZMINE_REVIEW_MAX_WAIT_SECONDS = 0.3
    state = submit(api, ecommerce).json()
    started = time.monotonic()
    assert api.get(f"/api/v1/submissions/{state['id']}/wait/?timeout=600").json()["timed_out"]
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("query", ["timeout=soon", "timeout=-1", "until=forever"])
def test_wait_refuses_bad_parameters(api, ecommerce, query) -> None:
    state = submit(api, ecommerce).json()
    response = api.get(f"/api/v1/submissions/{state['id']}/wait/?{query}")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_field"


def test_wait_does_not_block_other_requests(api, issued, ecommerce) -> None:
    """The wait view is async: while one agent waits, the server still answers others."""
    import asyncio

    from django.test import AsyncClient

    state = submit(api, ecommerce).json()
    client = AsyncClient()
    auth = {"Authorization": f"Bearer {issued.raw}"}

    async def both() -> tuple[float, float]:
        started = time.monotonic()
        waiting = asyncio.ensure_future(
            client.get(f"/api/v1/submissions/{state['id']}/wait/?timeout=1.5", headers=auth)
        )
        await asyncio.sleep(0.2)
        await client.get(f"/api/v1/submissions/{state['id']}/", headers=auth)
        quick = time.monotonic() - started
        response = await waiting
        assert response.status_code == 200, response.content
        assert response.json()["timed_out"] is True
        return quick, time.monotonic() - started

    quick, total = asyncio.run(both())
    assert quick < 1.2 < total
