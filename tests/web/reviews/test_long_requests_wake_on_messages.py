"""Agents' long-polls and streams sleep on the channel layer: a decision wakes them at once,
and while nothing happens they do not read the database."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from django.db import connection
from django.test import AsyncClient

from jazzmine_web.reviews import api as review_api
from jazzmine_web.reviews.models import Submission
from jazzmine_web.reviews.services import submission_reject

from .conftest import submit

pytestmark = pytest.mark.django_db(transaction=True)


def reject_later(submission_id, reviewer, delay: float) -> tuple[threading.Thread, list[float]]:
    decided: list[float] = []

    def reject() -> None:
        time.sleep(delay)
        try:
            submission = Submission.objects.get(pk=submission_id)
            submission_reject(submission=submission, user=reviewer, feedback="not this way")
            decided.append(time.monotonic())
        finally:
            connection.close()

    thread = threading.Thread(target=reject)
    thread.start()
    return thread, decided


def count_calls(monkeypatch, name: str) -> list[float]:
    calls: list[float] = []
    real = getattr(review_api, name)

    def counted(*args, **kwargs):
        calls.append(time.monotonic())
        return real(*args, **kwargs)

    monkeypatch.setattr(review_api, name, counted)
    return calls


def test_a_long_poll_answers_the_moment_a_reviewer_decides(
    api, issued, ecommerce, reviewer, monkeypatch
) -> None:
    state = submit(api, ecommerce).json()
    reads = count_calls(monkeypatch, "_wait_snapshot")
    thread, decided = reject_later(state["id"], reviewer, delay=2.0)

    async def wait() -> tuple[dict, float]:
        response = await AsyncClient().get(
            f"/api/v1/submissions/{state['id']}/wait/?timeout=30",
            headers={"Authorization": f"Bearer {issued.raw}"},
        )
        return json.loads(response.content), time.monotonic()

    answer, answered = asyncio.run(wait())
    thread.join()
    assert answer["status"] == "rejected" and answer["timed_out"] is False
    # Well under the 5 s safety-net recheck: a message woke it, not the timer.
    assert answered - decided[0] < 2.0, "the long-poll slept past the decision"
    # One read to start, one after the decision woke it: nothing while it slept for 2 s.
    assert len(reads) == 2


def test_an_event_stream_sleeps_until_something_happens(
    api, issued, ecommerce, reviewer, monkeypatch
) -> None:
    state = submit(api, ecommerce).json()
    reads = count_calls(monkeypatch, "_stream_snapshot")
    thread, decided = reject_later(state["id"], reviewer, delay=2.0)

    async def read() -> list[tuple[dict, float]]:
        response = await AsyncClient().get(
            f"/api/v1/submissions/{state['id']}/events/",
            headers={"Authorization": f"Bearer {issued.raw}"},
        )
        lines = []
        async for chunk in response.streaming_content:
            now = time.monotonic()
            lines += [(json.loads(x), now) for x in chunk.decode().splitlines() if x]
        return lines

    lines = asyncio.run(asyncio.wait_for(read(), timeout=30))
    thread.join()
    assert [line["type"] for line, _at in lines] == ["submission", "submission", "end"]
    assert lines[-1][0]["status"] == "rejected"
    assert lines[-1][1] - decided[0] < 2.0
    assert len(reads) <= 3  # the view's first look, the stream's first turn, the wake
