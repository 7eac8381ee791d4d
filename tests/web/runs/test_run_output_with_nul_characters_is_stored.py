"""A script's output with NUL characters (\\u0000) is stored and shown, never refused or lost.

PostgreSQL can hold no NUL in text nor `\\u0000` in jsonb: a run whose script printed one was
failed for "an event that could not be stored", and everything after it was lost. A NUL is
stored as U+FFFD (`studio.storable`), the same text for the run's page, its socket and the
agent that submitted it. The same on SQLite, which could hold it.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from django.test import AsyncClient, Client

from jazzmine_web.reviews.models import ReviewPolicy, Submission
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.selectors import run_events_after
from jazzmine_web.teams.services import api_token_create
from tests.web.reviews.conftest import set_policy

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

# Escapes in the source: a NUL byte itself is no script (the validator refuses it).
PRINTS = r"""
print("p\x00q")
emit_log("l\x00g")
emit_intermediate("st\x00ep", {"k\x00": ["v" + chr(0)]})
emit_result({"r\x00": "s\x00", "n": 1})
"""
RAISES = r"""
emit_log("before")
if len("x") == 1:
    raise ValueError("bad\x00value")
emit_result(1)
"""
R = "\ufffd"  # what a NUL is stored and shown as


def _agent_submits(member, sandbox, body: str) -> tuple[Client, str, str]:
    """Submit a body as an agent to a sandbox that never reviews; return its client and ids."""
    set_policy(sandbox, ReviewPolicy.NEVER)
    issued = api_token_create(user=member, name="ci-bot")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {issued.raw}")
    payload = {"sandbox": sandbox.pk, "task": "t", "body": body}
    state = api.post("/api/v1/submissions/", payload, content_type="application/json").json()
    run_id = str(Submission.objects.get(pk=state["id"]).run_id)
    return api, state["id"], run_id


async def _stream(raw: str, submission_id: str) -> list[dict]:
    response = await AsyncClient().get(
        f"/api/v1/submissions/{submission_id}/events/",
        headers={"Authorization": f"Bearer {raw}"},
    )
    chunks = [chunk async for chunk in response.streaming_content]
    lines = [json.loads(line) for line in b"".join(chunks).decode().splitlines() if line]
    return [line["event"] for line in lines if line["type"] == "event"]


def test_printed_logged_and_emitted_nuls_are_stored_and_the_run_succeeds(
    ecommerce, member, worker
) -> None:
    api, submission_id, run_id = _agent_submits(member, ecommerce, PRINTS)
    status = worker.future(run_id).result(timeout=180)
    run = Run.objects.get(pk=run_id)
    assert status == RunStatus.SUCCEEDED, run.message
    events = run_events_after(run)
    assert [e["type"] for e in events] == ["log", "log", "intermediate", "result", "exit"]
    assert run.event_count == 5
    assert [e["data"]["message"] for e in events[:2]] == [f"p{R}q", f"l{R}g"]
    assert events[2]["data"] == {"label": f"st{R}ep", "data": {f"k{R}": [f"v{R}"]}}
    assert events[3]["data"] == run.result == {f"r{R}": f"s{R}", "n": 1}

    # The agent reads what was stored, in the state and in the event stream alike.
    state = api.get(f"/api/v1/submissions/{submission_id}/").json()
    assert state["run"]["status"] == "succeeded"
    assert state["run"]["result"] == {f"r{R}": f"s{R}", "n": 1}
    raw = api.defaults["HTTP_AUTHORIZATION"].split()[1]
    assert asyncio.run(_stream(raw, submission_id)) == events

    # So does the browser: the run's page.
    browser = Client()
    browser.force_login(member)
    page = browser.get(f"/runs/{run_id}/").content.decode()
    assert f"p{R}q" in page and f"l{R}g" in page and f"st{R}ep" in page
    assert "\x00" not in page


def test_an_exception_with_a_nul_fails_the_run_with_its_error_stored(
    ecommerce, member, worker
) -> None:
    api, submission_id, run_id = _agent_submits(member, ecommerce, RAISES)
    assert worker.future(run_id).result(timeout=180) == RunStatus.FAILED
    run = Run.objects.get(pk=run_id)
    # The script's own failure, nothing of storing it.
    assert run.outcome == "script_error", run.message
    assert f"ValueError: bad{R}value" in run.error
    events = run_events_after(run)
    assert [e["type"] for e in events] == ["log", "error", "exit"]
    assert f"bad{R}value" in events[1]["data"]["message"]
    state = api.get(f"/api/v1/submissions/{submission_id}/").json()
    assert f"ValueError: bad{R}value" in state["run"]["error"]
