"""Pages asking the workers to fill a sandbox's pools (`prewarm`, sent as a playground socket
opens) cost one broadcast per sandbox per while, however many they send: each broadcast
reaches every worker, which answers it with a read on the thread that stores its runs'
events, and the web process sends broadcasts one at a time (a run's cancel waits behind)."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.catalog.services import sandbox_create
from jazzmine_web.playground import consumers
from jazzmine_web.workers import services as worker_services
from tests.web.helpers import playground_socket

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def broadcasts(monkeypatch) -> list[tuple]:
    sent: list[tuple] = []
    monkeypatch.setattr(
        worker_services.celery_app.control,
        "broadcast",
        lambda command, arguments=None, **_: sent.append((command, arguments)),
    )
    # Nothing asked before this test (raising=False: a release without the limit fails below).
    monkeypatch.setattr(consumers, "_prewarm_asked", {}, raising=False)
    return sent


async def prewarms(user, sandboxes, *, each: int) -> None:
    """Send `each` prewarms per sandbox on one socket; return once all were handled."""
    ws = await playground_socket(user, timeout=10)
    try:
        for _ in range(each):
            for sandbox in sandboxes:
                await ws.send_json_to({"type": "prewarm", "sandbox": sandbox.pk})
        # Messages are handled in order: the answer to this one comes after every prewarm.
        await ws.send_json_to({"type": "validate", "sandbox": sandboxes[0].pk, "body": "x = 1"})
        assert (await ws.receive_json_from(timeout=10))["type"] == "validation"
    finally:
        await ws.disconnect()


async def test_a_hundred_prewarms_of_one_sandbox_ask_once(ecommerce, member, broadcasts):
    await prewarms(member, [ecommerce], each=100)
    await prewarms(member, [ecommerce], each=100)  # another socket, the same process
    assert broadcasts == [("sandbox_prewarm", {"sandbox_id": ecommerce.pk})]


async def test_each_sandbox_is_asked_for_and_again_after_a_while(
    ecommerce, member, team, broadcasts, monkeypatch
):
    scratch = await database_sync_to_async(sandbox_create)(team=team, name="scratch")
    await prewarms(member, [ecommerce, scratch], each=20)
    assert sorted(b[1]["sandbox_id"] for b in broadcasts) == sorted([ecommerce.pk, scratch.pk])
    monkeypatch.setattr(consumers, "PREWARM_EVERY_SECONDS", 0.0, raising=False)
    await prewarms(member, [ecommerce], each=1)
    assert len(broadcasts) == 3
