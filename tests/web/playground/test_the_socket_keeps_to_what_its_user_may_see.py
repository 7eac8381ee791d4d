"""The playground's socket keeps to what its user may see now: a run it follows stops streaming
once they leave the team, and a session id that is not theirs (or no id at all) starts a new
session of their own instead of ending the socket."""

from __future__ import annotations

import time

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.playground.models import PlaygroundSession
from jazzmine_web.playground.services import session_open
from jazzmine_web.runs.models import Run
from jazzmine_web.runs.services import run_create, run_record_event
from jazzmine_web.studio import live
from jazzmine_web.teams.models import Membership, Role
from tests.web.helpers import collect_until, follow, playground_socket, teammate

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def queued_run(ecommerce, member) -> Run:
    return run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)


async def test_a_followed_run_stops_streaming_once_its_user_left_the_team(
    ecommerce, member, monkeypatch
):
    monkeypatch.setattr(live, "ACCESS_RECHECK_SECONDS", 0.0)
    run = await queued_run(ecommerce, member)
    ws = await playground_socket(member, timeout=10)
    try:
        await follow(ws, run.pk)
        await database_sync_to_async(Membership.objects.filter(user=member).delete)()
        event = {"seq": 1, "type": "log", "data": {"message": "secret"}, "ts": time.time()}
        await database_sync_to_async(run_record_event)(run_id=run.pk, event=event)
        answer = await ws.receive_json_from(timeout=5)
        assert await ws.receive_nothing(timeout=0.3)
    finally:
        await ws.disconnect()
    assert answer == {"type": "error", "message": "no such run"}


async def test_a_session_id_not_hers_starts_a_session_of_her_own(ecommerce, member, team, llm):
    llm.script("```python\nemit_result(1)\n```")
    grace = await database_sync_to_async(teammate)(team, Role.ADMIN)
    graces = await database_sync_to_async(session_open)(user=grace, sandbox=ecommerce, task="g")
    opened = []
    ws = await playground_socket(member, timeout=10)
    try:
        for session_id in ("not-a-uuid", str(graces.pk)):
            await ws.send_json_to(
                {"type": "generate", "sandbox": ecommerce.pk, "task": "Count",
                 "session": session_id}
            )  # fmt: skip
            messages = await collect_until(ws, "generation_finished", timeout=30)
            opened.append(next(m for m in messages if m["type"] == "session")["session"])
    finally:
        await ws.disconnect()
    sessions = await database_sync_to_async(
        lambda: list(PlaygroundSession.objects.filter(pk__in=opened).values_list("user", "task"))
    )()
    assert str(graces.pk) not in opened
    assert sessions and all(s == (member.pk, "Count") for s in sessions)
