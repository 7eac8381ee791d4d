"""The playground's live checks say when the editor holds the other language's script."""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator

from tests.web.helpers import playground_socket

pytestmark = pytest.mark.django_db(transaction=True)

PYTHON = "orders = get_orders(user_id='u1')\nemit_result({'n': len(orders.data)})\n"
BASH = "get_orders --user-id u1 | jq '.orders | length'\n"


async def validate(ws: WebsocketCommunicator, sandbox: int, body: str, language: str) -> dict:
    await ws.send_json_to(
        {"type": "validate", "version": 1, "sandbox": sandbox, "body": body, "language": language}
    )
    reply = await ws.receive_json_from(timeout=10)
    assert reply["type"] == "validation"
    return reply


async def test_python_in_bash_mode_and_bash_in_python_mode_are_flagged(ecommerce, member):
    ws = await playground_socket(member)
    try:
        reply = await validate(ws, ecommerce.pk, PYTHON, "bash")
        first = reply["violations"][0]
        assert first["line"] is None
        assert "looks like a Python script, but the playground is in bash mode" in first["message"]

        reply = await validate(ws, ecommerce.pk, BASH, "python")
        first = reply["violations"][0]
        assert "looks like a bash script, but the playground is in Python mode" in first["message"]

        # The right language in each mode is not flagged.
        assert (await validate(ws, ecommerce.pk, BASH, "bash"))["violations"] == []
        reply = await validate(ws, ecommerce.pk, PYTHON, "python")
        assert not any("looks like" in v["message"] for v in reply["violations"])
    finally:
        await ws.disconnect()


async def test_a_bash_command_nothing_answers_to_is_named_on_its_line(ecommerce, member):
    # A typo of a tool, and a host program bashkit does not have: both would exit 127 when
    # the script reached them; the editor names them before anything runs.
    body = "get_orders --user-id u1\nget_order --user-id u1 | jq length\ncat /etc/hostname\n"
    ws = await playground_socket(member)
    try:
        violations = (await validate(ws, ecommerce.pk, body, "bash"))["violations"]
    finally:
        await ws.disconnect()
    assert [v["line"] for v in violations] == [2, 3]
    assert "'get_order' is not a command here" in violations[0]["message"]
    assert "get_orders" in violations[0]["message"]  # the tools it could have meant
    assert "'cat' is not a command here" in violations[1]["message"]
