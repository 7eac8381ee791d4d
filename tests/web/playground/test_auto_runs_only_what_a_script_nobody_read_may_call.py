"""The Auto loop runs what the LLM wrote before anyone reads it, so it may call only what a script
nobody read may call: the always-allowed tools, at the code an admin accepted (every tool in a
sandbox that never reviews). A script that calls, or may call, any other tool is not run: the
loop stops there, the script stays in the editor, and the member's own Run runs it. The loop
also asks again, before each run, whether its member may still use the sandbox.
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from jazzmine.llm.fake.server import FakeLLMServer
from jazzmine_web.catalog.models import Tool
from jazzmine_web.reviews.models import ReviewPolicy
from jazzmine_web.runs.models import Run
from jazzmine_web.teams.models import Membership
from tests.web.helpers import collect_until, playground_socket
from tests.web.reviews.conftest import set_policy

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

CANCEL = 'r = update_order_status(order_id="ORD-1", status="cancelled")\nemit_result(r.data)\n'
# The same call, spelled so that no line names the call outright: the reading counts each
# mention of a tool that needs a person as a call.
SPELLINGS = {
    "direct": CANCEL,
    "fenced": f"Sure!\n```python\n{CANCEL}```\n",
    "alias": 'change = update_order_status\nemit_result(change("ORD-1", "cancelled").data)\n',
    "in-a-list": 'fs = [update_order_status]\nemit_result(fs[0]("ORD-1", "cancelled").data)\n',
    "lambda": 'f = lambda: update_order_status("ORD-1", "cancelled")\nemit_result(f().data)\n',
}
LOOKUP = 'r = get_orders(status="delivered")\nemit_result(len(r.data["orders"]))\n'


def auto(sandbox, *, attempts: int = 1, task: str = "Cancel order ORD-1") -> dict:
    return {"type": "auto", "sandbox": sandbox.pk, "task": task, "max_attempts": attempts}


async def auto_loop(member, sandbox, *, task: str = "Cancel order ORD-1") -> list[dict]:
    """Press Auto (one attempt) on a fresh playground socket; return its messages to the end."""
    ws = await playground_socket(member)
    try:
        await ws.send_json_to(auto(sandbox, task=task))
        return await collect_until(ws, "finished", timeout=240)
    finally:
        await ws.disconnect()


def runs_of(member) -> list[Run]:
    return list(Run.objects.filter(created_by=member).order_by("created_at"))


@pytest.mark.parametrize("body", SPELLINGS.values(), ids=SPELLINGS.keys())
async def test_an_unread_script_calling_a_tool_that_needs_a_person_is_not_run(
    ecommerce, lookups, member, llm, worker, body
) -> None:
    llm.script(body)
    messages = await auto_loop(member, ecommerce)
    held = [m for m in messages if m["type"] == "held"]
    refused = [m for m in messages if m["type"] == "validated" and m["violations"]]
    # Held for a person, or refused by the validator outright: never run either way.
    assert held or refused, [m["type"] for m in messages]
    if held:
        assert "update_order_status" in held[0]["reason"] and "press Run" in held[0]["reason"]
    assert not any(m["type"] in ("run_created", "run_finished") for m in messages)
    assert messages[-1]["success"] is False
    assert await database_sync_to_async(runs_of)(member) == []


async def test_the_member_reads_the_held_script_and_runs_it_by_hand(
    ecommerce, lookups, member, llm, worker
) -> None:
    llm.script(CANCEL)
    ws = await playground_socket(member)
    try:
        await ws.send_json_to(auto(ecommerce))
        messages = await collect_until(ws, "finished", timeout=120)
        generated = next(m for m in messages if m["type"] == "generated")
        session = next(m for m in messages if m["type"] == "session")["session"]
        # Run, pressed by the person who read it: every tool, as any run by hand.
        await ws.send_json_to(
            {
                "type": "run",
                "sandbox": ecommerce.pk,
                "session": session,
                "task": "Cancel order ORD-1",
                "body": generated["body"],
                "attempt_id": generated["attempt_id"],
            }
        )
        while True:
            message = await ws.receive_json_from(timeout=120)
            assert message["type"] != "error", message
            if message["type"] == "status" and message["status"] in ("succeeded", "failed"):
                break
    finally:
        await ws.disconnect()
    assert message["status"] == "succeeded"
    (run,) = await database_sync_to_async(runs_of)(member)
    assert run.allowed_tools is None
    assert run.result == {"order_id": "ORD-1", "status": "cancelled"}


async def test_an_unread_script_calling_only_lookups_runs_with_only_those_pinned(
    ecommerce, lookups, member, llm, worker
) -> None:
    llm.script(LOOKUP)
    messages = await auto_loop(member, ecommerce, task="How many delivered orders?")
    assert messages[-1]["success"] is True, messages[-3:]
    (run,) = await database_sync_to_async(runs_of)(member)
    # Each at the whole digest of the code an admin accepted.
    pins = await database_sync_to_async(
        lambda: {
            t.name: t.code_digest for t in Tool.objects.filter(sandbox=ecommerce, always_allow=True)
        }
    )()
    assert run.allowed_tools == pins and "update_order_status" not in pins


async def test_a_sandbox_that_never_reviews_lets_its_automation_call_every_tool(
    ecommerce, member, llm, worker
) -> None:
    await database_sync_to_async(set_policy)(ecommerce, ReviewPolicy.NEVER)
    llm.script(CANCEL)
    messages = await auto_loop(member, ecommerce)
    assert messages[-1]["success"] is True
    (run,) = await database_sync_to_async(runs_of)(member)
    assert run.allowed_tools is None


async def test_a_loop_whose_member_left_the_team_starts_no_further_run(
    ecommerce, member, settings, worker
) -> None:
    # Slow tokens: the member is taken out while the second answer is being written.
    async with FakeLLMServer(token_delay=0.05) as llm:
        settings.JAZZMINE_LLM_BASE_URL = llm.base_url
        settings.JAZZMINE_LLM_MODEL = "jazzmine-fake"
        settings.JAZZMINE_OUTBOUND_ALLOWED_HOSTS = [f"{llm.host}:{llm.port}"]
        failing = "x = 1\nemit_log(x)\nemit_result(x / 0)\n"  # calls no tool; fails
        llm.script(failing, failing, failing)
        ws = await playground_socket(member)
        try:
            await ws.send_json_to(auto(ecommerce, attempts=3, task="Divide"))
            while (message := await ws.receive_json_from(timeout=120))["type"] != "run_finished":
                assert message["type"] != "error", message
            await database_sync_to_async(Membership.objects.filter(user=member).delete)()
            while (message := await ws.receive_json_from(timeout=120))["type"] not in (
                "error",
                "finished",
            ):
                pass
        finally:
            await ws.disconnect()
    assert message["type"] == "error"
    assert "no longer run scripts in this sandbox" in message["message"]
    assert len(await database_sync_to_async(runs_of)(member)) == 1
