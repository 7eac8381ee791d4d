"""The playground's Cancel stops the run its socket follows only while its author may still see
it, as the run page's Cancel does: one who left the sandbox's team stops none of its runs,
though the socket went on following the run (it rechecks only as the run's messages come)."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.runs import receivers
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create
from jazzmine_web.teams.models import Membership
from tests.web.helpers import follow, playground_socket

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def queued_run(ecommerce, member) -> Run:
    return run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)


async def test_an_author_who_left_the_team_cancels_nothing(ecommerce, member, monkeypatch) -> None:
    # Leaving the team ends her runs by itself (`runs.receivers`); silenced here, since what is
    # tested is her socket's cancel, which must be refused whatever else stops the run.
    monkeypatch.setattr(receivers, "runs_of_person_recheck", lambda **_kwargs: 0)
    run = await queued_run(ecommerce, member)
    ws = await playground_socket(member, timeout=10)
    try:
        await follow(ws, run.pk)
        await database_sync_to_async(Membership.objects.filter(user=member).delete)()
        await ws.send_json_to({"type": "cancel"})
        assert await ws.receive_nothing(timeout=0.5)  # no "run_cancelling"
    finally:
        await ws.disconnect()
    run = await database_sync_to_async(Run.objects.get)(pk=run.pk)
    assert run.status == RunStatus.QUEUED and run.cancel_reason == ""


async def test_an_author_still_in_the_team_cancels_her_run(ecommerce, member) -> None:
    run = await queued_run(ecommerce, member)
    ws = await playground_socket(member, timeout=10)
    try:
        await follow(ws, run.pk)
        await ws.send_json_to({"type": "cancel"})
        answer = await ws.receive_json_from(timeout=5)
    finally:
        await ws.disconnect()
    assert answer == {"type": "run_cancelling", "run_id": str(run.pk)}
    run = await database_sync_to_async(Run.objects.get)(pk=run.pk)
    assert run.status == RunStatus.FAILED and run.outcome == "cancelled"
