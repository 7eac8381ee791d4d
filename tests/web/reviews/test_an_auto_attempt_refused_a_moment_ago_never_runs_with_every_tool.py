"""An Auto attempt read as refused never runs with every tool, whatever changed since.

The Auto loop runs what the LLM wrote, unread: only the always-allowed tools. The attempt is
checked once to read which tools it calls, and again as its run is created. A Python script
calling `wipe_orders`, which is no tool yet, is refused by the first check, so the reading
was skipped and the run was created with no limit at all (every tool, as a person's own run).
A member creating `wipe_orders` between the two checks let the second pass: the unread
script ran the new tool, which no one allowed. A run made for an unattended attempt now
starts from no tool at all, and gets only what the reading allows.
"""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.services import tool_create
from jazzmine_web.playground import services as playground
from jazzmine_web.playground.services import attempt_record, attempt_run, session_open
from jazzmine_web.reviews.models import ReviewPolicy
from jazzmine_web.runs.models import Run

from .conftest import allow_tools, set_policy

pytestmark = pytest.mark.django_db

WIPE = """\
def wipe_orders() -> ToolResponse:
    return ToolResponse(success=True, data={"wiped": True})
"""
LLM = "orders = get_orders()\nemit_result(wipe_orders().data)\n"


@pytest.fixture
def created_meanwhile(monkeypatch, ecommerce, member):
    """Create wipe_orders between the attempt's reading and the creation of its run."""
    real = playground.run_create

    def run_create(**kwargs):
        tool_create(
            sandbox=ecommerce, name="wipe_orders", description="Delete every order.",
            source=WIPE, author=member, actor=member,
        )  # fmt: skip
        return real(**kwargs)

    monkeypatch.setattr(playground, "run_create", run_create)
    return ecommerce


def test_an_unattended_attempt_refused_by_its_reading_runs_with_no_tool(
    created_meanwhile, member
) -> None:
    set_policy(created_meanwhile, ReviewPolicy.UNLISTED_TOOLS)
    allow_tools(created_meanwhile, "get_orders")
    session = session_open(user=member, sandbox=created_meanwhile, task="Wipe")
    attempt = attempt_record(session=session, source="llm", prompt="", body=LLM)
    attempt_run(attempt=attempt, user=member, unattended=True)
    attempt.refresh_from_db()
    # Its run may call nothing: the reading that would have allowed anything never happened.
    assert attempt.run is not None and attempt.run.allowed_tools == {}
    assert not attempt.run.allowed_by_reviewer


def test_a_person_pressing_run_still_may_call_every_tool(created_meanwhile, member) -> None:
    session = session_open(user=member, sandbox=created_meanwhile, task="Wipe")
    attempt = attempt_record(session=session, source="human", prompt="", body=LLM)
    attempt_run(attempt=attempt, user=member)
    assert Run.objects.get().allowed_tools is None
