"""A playground message with a NUL character (\\u0000) anywhere (a task, a script, an id) is
answered with an error naming the field, and handled no further: PostgreSQL can neither store
nor look up text with a NUL. The socket stays open for the next message."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.playground.models import Attempt, PlaygroundSession
from jazzmine_web.runs.models import Run
from tests.web.helpers import playground_socket

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"type": "run", "task": "Orders\u0000", "body": "emit_result(1)"}, "task"),
        ({"type": "run", "task": "Orders", "body": "emit_result(1)\u0000"}, "body"),
        ({"type": "run", "task": "Orders", "body": "emit_result(1)", "session": "\u0000"}, "session"),
        ({"type": "auto", "task": "Orders\u0000"}, "task"),
        ({"type": "follow", "run_id": "\u0000"}, "run_id"),
        ({"type": "validate", "body": "x = '\u0000'"}, "body"),
    ],
    ids=["run-task", "run-body", "run-session", "auto-task", "follow", "validate"],
)  # fmt: skip
async def test_a_nul_in_a_message_is_refused(ecommerce, member, message, field) -> None:
    ws = await playground_socket(member, timeout=10)
    try:
        await ws.send_json_to({"sandbox": ecommerce.pk, **message})
        answer = await ws.receive_json_from(timeout=5)
        assert answer["type"] == "error"
        assert f"'{field}' contains a NUL character" in answer["message"]
        await ws.send_json_to({"type": "validate", "sandbox": ecommerce.pk, "body": "x = 1"})
        assert (await ws.receive_json_from(timeout=5))["type"] != "error"  # still open
    finally:
        await ws.disconnect()
    stored = await database_sync_to_async(
        lambda: (PlaygroundSession.objects.count(), Attempt.objects.count(), Run.objects.count())
    )()
    assert stored == (0, 0, 0)
