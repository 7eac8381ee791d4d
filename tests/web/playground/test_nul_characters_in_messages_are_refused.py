"""A playground message with a NUL character (\\u0000) anywhere (a task, a script, an id) is
answered with an error naming the field, and handled no further: PostgreSQL can neither store
nor look up text with a NUL. The socket stays open for the next message."""

from __future__ import annotations

import pytest

from tests.web.helpers import playground_rows, playground_socket, still_answering

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
        await still_answering(ws, ecommerce)
    finally:
        await ws.disconnect()
    assert await playground_rows() == (0, 0, 0)
