"""One user holds only so many long requests (waits and event streams) open at once.

Each open wait or stream holds a server thread for its whole life (Django runs a request's
sync calls in a thread of its own) and a channel-layer subscription, for up to ten minutes.
Without a cap, one agent token opened them by the thousand and took the web process's threads
from everyone. Past the cap the API answers 429 at once; a closed one frees its place.
"""

from __future__ import annotations

import asyncio
import gc
import threading

import pytest
from asgiref.testing import ApplicationCommunicator
from django.conf import settings
from django.test import AsyncRequestFactory

from jazzmine_web.asgi import application
from jazzmine_web.reviews import api as review_api
from jazzmine_web.reviews.models import Submission
from jazzmine_web.runs.models import RunEvent
from jazzmine_web.runs.services import run_create
from jazzmine_web.teams.services import api_token_create
from tests.web.helpers import teammate

from .conftest import submit

pytestmark = pytest.mark.django_db(transaction=True)

CAP = 3


@pytest.fixture
def capped(monkeypatch):
    monkeypatch.setattr(settings, "JAZZMINE_REVIEW_MAX_LONG_REQUESTS", CAP)


def _scope(path: str, raw: str, query: bytes = b"") -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": [(b"host", b"localhost"), (b"authorization", f"Bearer {raw}".encode())],
        "client": ("127.0.0.1", 40000),
        "server": ("localhost", 80),
    }


async def _open(path: str, raw: str, query: bytes = b"") -> tuple[ApplicationCommunicator, int]:
    """Start a request and return it with the status it answered (it may stay open)."""
    request = ApplicationCommunicator(application, _scope(path, raw, query))
    await request.send_input({"type": "http.request", "body": b"", "more_body": False})
    start = await request.receive_output(timeout=10)
    return request, start["status"]


async def _close(requests: list[ApplicationCommunicator]) -> None:
    for request in requests:
        await request.send_input({"type": "http.disconnect"})
    for request in requests:
        try:
            await request.wait(timeout=5)
        except Exception:  # an answer it had not sent yet, or its cancellation
            pass


def _events(state: dict) -> str:
    return f"/api/v1/submissions/{state['id']}/events/"


def test_streams_past_the_cap_are_refused_with_429(capped, api, issued, ecommerce) -> None:
    path = _events(submit(api, ecommerce).json())
    threads = threading.active_count()

    async def scenario() -> tuple[list[int], int, int]:
        held = [await _open(path, issued.raw) for _ in range(CAP)]
        extra, status = await _open(path, issued.raw)
        during = threading.active_count()
        await _close([r for r, _ in held] + [extra])
        return [s for _, s in held], status, during

    statuses, refused, during = asyncio.run(scenario())
    assert statuses == [200] * CAP
    assert refused == 429
    assert during - threads <= CAP + 2  # no thread per refused request


def test_a_wait_counts_with_the_streams(capped, api, issued, ecommerce) -> None:
    state = submit(api, ecommerce).json()

    async def scenario() -> int:
        held = [await _open(_events(state), issued.raw) for _ in range(CAP)]
        wait, status = await _open(
            f"/api/v1/submissions/{state['id']}/wait/", issued.raw, b"timeout=1"
        )
        await _close([r for r, _ in held] + [wait])
        return status

    assert asyncio.run(scenario()) == 429


def test_another_token_of_the_same_user_shares_the_cap(
    capped, api, issued, ecommerce, member
) -> None:
    path = _events(submit(api, ecommerce).json())
    second = api_token_create(user=member, name="second-bot")

    async def scenario() -> int:
        held = [await _open(path, issued.raw) for _ in range(CAP)]
        extra, status = await _open(path, second.raw)
        await _close([r for r, _ in held] + [extra])
        return status

    assert asyncio.run(scenario()) == 429


def test_a_closed_stream_frees_its_place(capped, api, issued, ecommerce) -> None:
    path = _events(submit(api, ecommerce).json())

    async def scenario() -> int:
        held = [await _open(path, issued.raw) for _ in range(CAP)]
        await _close([held.pop()[0]])
        again, status = await _open(path, issued.raw)
        await _close([r for r, _ in held] + [again])
        return status

    assert asyncio.run(scenario()) == 200


def test_another_users_streams_are_not_counted(capped, api, issued, ecommerce, team) -> None:
    path = _events(submit(api, ecommerce).json())
    other = api_token_create(user=teammate(team, "member", username="bob"), name="bob-bot")

    async def scenario() -> int:
        held = [await _open(path, issued.raw) for _ in range(CAP)]
        theirs, status = await _open(path, other.raw)
        await _close([r for r, _ in held] + [theirs])
        return status

    assert asyncio.run(scenario()) == 200


def test_a_stream_dropped_before_its_first_line_frees_its_place(
    capped, api, issued, ecommerce, member
) -> None:
    path = _events(submit(api, ecommerce).json())
    factory = AsyncRequestFactory()
    headers = {"Authorization": f"Bearer {issued.raw}"}

    async def scenario() -> None:
        for _ in range(CAP + 2):
            response = await review_api.submission_events(
                factory.get(path, headers=headers), id_of(path)
            )
            assert response.status_code == 200
            del response  # never read: its generator never starts, so never runs `finally`
            gc.collect()

    asyncio.run(scenario())
    assert review_api.LONG_REQUESTS.take(member.pk, CAP) is not None


def id_of(path: str) -> str:
    return path.rstrip("/").split("/")[-2]


def test_a_stream_refused_past_the_cap_reads_none_of_its_runs_events(
    monkeypatch, api, issued, ecommerce, member
) -> None:
    """Each refused stream read every event of its run first (20,000 of them: 0.6 s of the
    server's time), so a token past its cap still made the server read whole runs at will."""
    monkeypatch.setattr(settings, "JAZZMINE_REVIEW_MAX_LONG_REQUESTS", 0)
    state = submit(api, ecommerce).json()
    submission = Submission.objects.get(pk=state["id"])
    submission.run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)", start=False)
    submission.save(update_fields=["run"])
    RunEvent.objects.bulk_create(
        RunEvent(run=submission.run, seq=seq, type="log", data={"message": "x"}, ts=0.0)
        for seq in range(1, 201)
    )
    reads = []
    real = review_api.run_events_after
    monkeypatch.setattr(
        review_api, "run_events_after", lambda *a, **kw: reads.append(a) or real(*a, **kw)
    )

    async def scenario() -> int:
        request, status = await _open(_events(state), issued.raw)
        await _close([request])
        return status

    assert asyncio.run(scenario()) == 429
    assert reads == []
