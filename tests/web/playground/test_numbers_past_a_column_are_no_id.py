"""A playground message whose ids are numbers no database column holds (10**20, 2**63), or
not numbers at all (true, 1.5, "²", " 7"), gets an error saying what it names, and the
socket goes on: no such number reaches a lookup, where SQLite raises OverflowError and
PostgreSQL "integer out of range" (a foreign key's lookup is not bounded by Django)."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.playground.models import Attempt
from tests.web.helpers import playground_rows, playground_socket, still_answering

pytestmark = pytest.mark.django_db(transaction=True)

NOT_IDS = [10**20, 2**63, 2**63 - 1, -1, True, 1.5, "99999999999999999999", "²", " 7", "1_0"]
BODY = "emit_result(1)"


@pytest.mark.parametrize("value", NOT_IDS, ids=repr)
async def test_a_sandbox_that_is_no_id_is_no_such_sandbox(ecommerce, member, value) -> None:
    ws = await playground_socket(member, timeout=10)
    try:
        for message in (
            {"type": "run", "task": "Orders", "body": BODY},
            {"type": "validate", "body": "x = 1"},
            {"type": "auto", "task": "Orders"},
            {"type": "generate", "task": "Orders"},
        ):
            await ws.send_json_to({**message, "sandbox": value})
            answer = await ws.receive_json_from(timeout=5)
            assert answer == {"type": "error", "message": "no such sandbox"}, message
        await still_answering(ws, ecommerce)
    finally:
        await ws.disconnect()
    assert await playground_rows() == (0, 0, 0)


@pytest.mark.parametrize("value", [10**20, 2**63, "99999999999999999999"], ids=repr)
async def test_an_attempt_or_an_event_past_a_column_is_none(ecommerce, member, value) -> None:
    ws = await playground_socket(member, timeout=10)
    try:
        # An attempt id no row has: the body runs as a person's new attempt.
        await ws.send_json_to(
            {"type": "run", "sandbox": ecommerce.pk, "task": "Orders", "body": BODY,
             "attempt_id": value}
        )  # fmt: skip
        created = await ws.receive_json_from(timeout=10)
        assert created["type"] == "run_created", created
        statuses = 0
        while statuses < 1:  # the run's own follow: its pane, then its status
            answer = await ws.receive_json_from(timeout=10)
            statuses += answer["type"] == "status"
        # Following the run again from an event no run reaches: from its first one, as a
        # page that lost count would.
        await ws.send_json_to({"type": "follow", "run_id": created["run_id"], "after": value})
        kinds = []
        while not kinds or kinds[-1] != "status":
            answer = await ws.receive_json_from(timeout=10)
            assert answer["type"] != "error", answer
            kinds.append(answer["type"])
        assert kinds == ["run_html", "status"]
    finally:
        await ws.disconnect()
    assert await database_sync_to_async(Attempt.objects.count)() == 1
