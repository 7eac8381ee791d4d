"""An agent's big script, and a reviewer's big edit, are read in the checker process.

The API read a submission where it arrived: assembled (a parse, to tell a program from prose
around a fence), validated (a parse and a walk) and read for the tools it calls (a parse and a
walk), then all but the reading again as its run was made. `ast.parse` holds the GIL for its
whole run, so on the request's thread it still stalled every socket of the web process: a
100 KB script, half a second. A big script is now read in the checker process; the wait holds
no GIL. A checker process that dies, or takes too long, refuses the script with a clear error
and nothing is stored: it is never read in the web process instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.reviews.models import AuditEntry, ReviewPolicy, Submission
from jazzmine_web.runs.models import Run
from jazzmine_web.studio import checker
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import api_token_create
from tests.waiting import wait_until_async
from tests.web.checker import (
    API,
    PING_BOUND,
    ReaderWatch,
    checker_processes,
    parse_seconds,
    pinging,
    post_form,
    post_json,
    reader_busy,
)
from tests.web.helpers import allow_tools, playground_socket, teammate

from .conftest import BODY, set_policy

pytestmark = [pytest.mark.django_db(transaction=True)]


@database_sync_to_async
def _agent(sandbox, member, policy: str) -> str:
    set_policy(sandbox, policy)
    allow_tools(sandbox, "get_orders")
    return api_token_create(user=member, name="ci-bot").raw


async def _submit(token: str, sandbox, body: str) -> tuple[int, dict]:
    payload = {"sandbox": sandbox.pk, "task": "Total of delivered orders", "body": body}
    status, answer = await post_json("/api/v1/submissions/", payload, token)
    return status, json.loads(answer)


@database_sync_to_async
def _stored() -> tuple[list, int, int]:
    return (
        sorted(Submission.objects.values_list("pk", "status")),
        Run.objects.count(),
        AuditEntry.objects.count(),
    )


def test_the_scripts_take_far_longer_to_read_than_a_ping_may() -> None:
    # Else the bounds below prove nothing: the script must be slow to read in one process.
    assert parse_seconds(API) > 1.5 * PING_BOUND


async def test_a_big_submission_leaves_every_other_socket_answering(ecommerce, member) -> None:
    # Let through by the policy: read, then read again as its run is made.
    token = await _agent(ecommerce, member, ReviewPolicy.UNLISTED_TOOLS)
    other = await playground_socket(member)
    watch = ReaderWatch()
    try:
        async with pinging(other) as pings:
            status, state = await _submit(token, ecommerce, API)
    finally:
        await other.disconnect()
    assert status == 201, state
    assert state["status"] == "auto_approved" and state["violations"] == []
    assert [t["name"] for t in state["tools_called"]] == ["get_orders"]
    assert pings.longest < PING_BOUND, f"a ping waited {pings.longest:.3f} s for the reading"
    assert watch.busy(), "no process under the web process read the script: it was read in it"


async def test_a_reviewers_big_edit_and_approval_leave_every_other_socket_answering(
    ecommerce, member
) -> None:
    token = await _agent(ecommerce, member, ReviewPolicy.ALWAYS)
    reviewer = await database_sync_to_async(teammate)(ecommerce.team, Role.REVIEWER)
    status, state = await _submit(token, ecommerce, API)
    assert status == 201 and state["status"] == "pending", state
    edit = API.replace("+len(a))", "+len(a)+1)")
    other = await playground_socket(member)
    try:
        async with pinging(other) as read:
            status, page = await post_form(
                f"/reviews/{state['id']}/reading/", {"body": edit}, reviewer
            )
        assert status == 200, page[:300]
        assert b"get_orders" in page
        async with pinging(other) as approved:
            status, page = await post_form(f"/reviews/{state['id']}/approve/", {}, reviewer)
        assert status == 302, page[:300]
    finally:
        await other.disconnect()
    submission = await database_sync_to_async(Submission.objects.get)(pk=state["id"])
    assert submission.status == "approved" and submission.run_id is not None
    assert read.longest < PING_BOUND, f"a ping waited {read.longest:.3f} s for the edit's reading"
    assert approved.longest < PING_BOUND, f"a ping waited {approved.longest:.3f} s for approval"


async def test_a_killed_checker_refuses_the_script_and_stores_nothing(ecommerce, member) -> None:
    token = await _agent(ecommerce, member, ReviewPolicy.UNLISTED_TOOLS)
    status, _ = await _submit(token, ecommerce, BODY)  # a small one: read here, and stored
    assert status == 201
    before = await _stored()

    watch = ReaderWatch()
    submitted = asyncio.create_task(_submit(token, ecommerce, API))
    reader = await reader_busy(watch)
    os.kill(reader, signal.SIGKILL)
    status, answer = await submitted

    assert status == 503, answer
    assert answer["error"]["code"] == "script_unchecked"
    assert "could not be checked" in answer["error"]["message"]
    assert "killed" in answer["error"]["message"]
    # Nothing of it was stored (no submission, run or audit entry), nothing earlier was lost.
    assert await _stored() == before
    # The next big script gets a new checker process.
    status, state = await _submit(token, ecommerce, API)
    assert status == 201 and state["status"] == "auto_approved", state


async def test_a_checker_out_of_time_is_stopped_and_the_script_refused(
    ecommerce, member, monkeypatch
) -> None:
    token = await _agent(ecommerce, member, ReviewPolicy.UNLISTED_TOOLS)
    status, _ = await _submit(token, ecommerce, API)  # the checker process is started
    assert status == 201
    before, running = await _stored(), _alive(checker_processes())
    monkeypatch.setattr(checker, "CHECK_TIMEOUT_SECONDS", 0.1)
    status, answer = await _submit(token, ecommerce, API)
    assert status == 503, answer
    assert answer["error"]["code"] == "script_unchecked"
    assert "took longer than 0.1 seconds" in answer["error"]["message"]
    assert await _stored() == before

    # The process that was reading it was killed: it holds nobody's text any more.
    async def killed() -> set[int]:
        return running - _alive(running)

    await wait_until_async(
        killed,
        timeout=5,
        message="the checker process out of time still runs",
    )
    monkeypatch.undo()
    status, state = await _submit(token, ecommerce, API)
    assert status == 201 and state["status"] == "auto_approved", state


def _alive(pids: set[int]) -> set[int]:
    """Return those of the processes that still run (not gone, nor a zombie)."""
    alive = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                    alive.add(pid)
        except OSError:
            pass
    return alive
