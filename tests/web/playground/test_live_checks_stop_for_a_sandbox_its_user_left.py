"""The playground's live checks answer for a sandbox only while its user may use it.

A page's socket reads a sandbox's tool names once and keeps them for the next keystrokes. They
were kept for good: someone taken out of the team went on having their scripts checked
against that sandbox's tools (which it names and which it does not) on a socket opened before,
where every other message (prewarm, run, generate) already answered "no such sandbox".
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.studio import live
from jazzmine_web.teams.services import membership_remove
from tests.web.helpers import playground_socket

pytestmark = pytest.mark.django_db(transaction=True)

BODY = "orders = get_orders()\nemit_result(orders.data)\n"


@pytest.fixture(autouse=True)
def every_check_asks_again(monkeypatch):
    # A socket relies on its last check for a second; a test need not wait that long.
    monkeypatch.setattr(live, "ACCESS_RECHECK_SECONDS", 0.0)


async def test_a_check_after_leaving_the_team_is_refused(ecommerce, member, team):
    ws = await playground_socket(member, timeout=10)
    try:
        message = {"type": "validate", "version": 1, "sandbox": ecommerce.pk, "body": BODY}
        await ws.send_json_to(message)
        before = await ws.receive_json_from(timeout=5)
        await database_sync_to_async(membership_remove)(team=team, user=member)
        await ws.send_json_to({**message, "version": 2})
        after = await ws.receive_json_from(timeout=5)
        # As every other message of the socket says for it, and for one never seen.
        await ws.send_json_to({"type": "prewarm", "sandbox": ecommerce.pk})
        prewarm = await ws.receive_json_from(timeout=5)
    finally:
        await ws.disconnect()
    assert before["type"] == "validation" and before["violations"] == []
    assert after == prewarm == {"type": "error", "message": "no such sandbox"}


async def test_checks_go_on_while_the_user_stays(ecommerce, member):
    ws = await playground_socket(member, timeout=10)
    try:
        answers = []
        for version in (1, 2, 3):
            await ws.send_json_to(
                {"type": "validate", "version": version, "sandbox": ecommerce.pk, "body": BODY}
            )
            answers.append(await ws.receive_json_from(timeout=5))
    finally:
        await ws.disconnect()
    assert [(a["type"], a["version"]) for a in answers] == [("validation", v) for v in (1, 2, 3)]
