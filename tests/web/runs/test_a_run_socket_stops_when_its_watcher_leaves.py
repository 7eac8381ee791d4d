"""A run socket is checked for as long as it is open, not only when it connects: someone who
left the sandbox's team (or was deactivated) stops receiving its events at the next live
message or catch-up read, and their socket closes as one for a run they may not see."""

from __future__ import annotations

import time

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model

from jazzmine_web.runs.consumers import CLOSE_NOT_FOUND
from jazzmine_web.runs.models import Run, RunEvent
from jazzmine_web.runs.services import run_create, run_record_event
from jazzmine_web.studio import live, session_bound
from jazzmine_web.teams.models import Membership, Role
from jazzmine_web.teams.services import membership_set, team_create
from tests.web.helpers import run_socket, teammate

from .html import seqs

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def every_message_rechecks(monkeypatch):
    # The socket relies on each check for a second (its team, and its login: a deactivated
    # user's session signs nobody in); a test need not wait that long.
    monkeypatch.setattr(live, "ACCESS_RECHECK_SECONDS", 0.0)
    monkeypatch.setattr(session_bound, "SIGNED_IN_RECHECK_SECONDS", 0.0)


def log(seq: int) -> dict:
    return {"seq": seq, "type": "log", "data": {"message": f"secret line {seq}"}, "ts": time.time()}


@database_sync_to_async
def queued_run(ecommerce, member) -> Run:
    # Started by a teammate: the watcher who leaves is not its author (an author's leaving
    # ends her runs by itself, `runs.receivers`), so the run goes on and only the socket stops.
    author = teammate(ecommerce.team, Role.MEMBER, username="author")
    return run_create(sandbox=ecommerce, user=author, body="emit_result(1)\n", start=False)


@database_sync_to_async
def leave_the_team(user) -> None:
    Membership.objects.filter(user=user).delete()


@database_sync_to_async
def move_to_another_team(user) -> None:
    Membership.objects.filter(user=user).delete()
    membership_set(team=team_create(name="Other", slug="other"), user=user, role=Role.ADMIN)


@database_sync_to_async
def deactivate(user) -> None:
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)


record = database_sync_to_async(run_record_event)


async def closed_without_events(ws) -> bool:
    """Tell whether the socket closed as for an unknown run, having sent no event first."""
    output = await ws.receive_output(timeout=5)
    return output == {"type": "websocket.close", "code": CLOSE_NOT_FOUND}


@pytest.mark.parametrize("lose_access", [leave_the_team, move_to_another_team, deactivate])
async def test_an_open_socket_stops_at_the_next_live_message(lose_access, ecommerce, member):
    run = await queued_run(ecommerce, member)
    ws = await run_socket(run, member)
    try:
        await record(run_id=run.pk, event=log(1))
        assert seqs(await ws.receive_from(timeout=5)) == [1]  # while she may see it
        await lose_access(member)
        await record(run_id=run.pk, event=log(2))
        assert await closed_without_events(ws)
    finally:
        await ws.disconnect()


async def test_an_open_socket_stops_at_its_next_catch_up_read(ecommerce, member, monkeypatch):
    monkeypatch.setattr(live, "SILENCE_SECONDS", 0.3)
    run = await queued_run(ecommerce, member)
    ws = await run_socket(run, member)
    try:
        await leave_the_team(member)
        # Stored with no live message: only the read after the silence would show it.
        await database_sync_to_async(RunEvent.objects.create)(run=run, **log(1))
        assert await closed_without_events(ws)
    finally:
        await ws.disconnect()
