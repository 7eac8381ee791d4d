"""A run records the tools it may call, following the decision that let it run."""

from __future__ import annotations

import pytest

from jazzmine_web.playground.services import attempt_record, attempt_run, session_open
from jazzmine_web.reviews.models import ReviewPolicy, Submission
from jazzmine_web.reviews.services import submission_approve
from jazzmine_web.runs.models import Run

from .conftest import BODY, allow_tools, set_policy, submit

pytestmark = pytest.mark.django_db

ALLOWED_ONLY = "r = get_orders()\nemit_result(r.data)\n"


def test_a_run_the_policy_let_through_may_call_only_the_always_allowed_tools(
    api, ecommerce
) -> None:
    set_policy(ecommerce, ReviewPolicy.UNLISTED_TOOLS)
    allow_tools(ecommerce, "get_orders", "search_products")
    assert submit(api, ecommerce, body=ALLOWED_ONLY).json()["status"] == "auto_approved"
    # Each with the whole digest of the code an admin accepted.
    assert Run.objects.get().allowed_tools == {
        t.name: t.code_digest
        for t in ecommerce.tools.filter(name__in=["get_orders", "search_products"])
    }


def test_an_unpublished_always_allowed_tool_is_not_carried(api, ecommerce) -> None:
    set_policy(ecommerce, ReviewPolicy.UNLISTED_TOOLS)
    allow_tools(ecommerce, "get_orders", "search_products")
    ecommerce.tools.filter(name="search_products").update(published=False)
    submit(api, ecommerce, body=ALLOWED_ONLY)
    assert list(Run.objects.get().allowed_tools) == ["get_orders"]
    assert not Run.objects.get().allowed_by_reviewer


def test_a_run_of_a_sandbox_that_never_reviews_may_call_every_tool(api, ecommerce) -> None:
    set_policy(ecommerce, ReviewPolicy.NEVER)
    assert submit(api, ecommerce).json()["status"] == "auto_approved"
    assert Run.objects.get().allowed_tools is None


def test_a_run_a_reviewer_approved_may_call_the_tools_they_were_shown(
    api, ecommerce, reviewer
) -> None:
    set_policy(ecommerce, ReviewPolicy.UNLISTED_TOOLS)
    allow_tools(ecommerce, "get_orders")
    state = submit(api, ecommerce, body=BODY + 'emit_log(get_user("U-1").message)\n').json()
    assert state["status"] == "pending"
    submission_approve(submission=Submission.objects.get(pk=state["id"]), user=reviewer)
    run = Run.objects.get()
    # Always-allowed or not: the reviewer approved each; and no other tool.
    assert sorted(run.allowed_tools) == ["get_orders", "get_user"] and run.allowed_by_reviewer


def test_a_reviewer_edit_and_approval_may_call_the_tools_of_the_edit(
    api, ecommerce, reviewer
) -> None:
    state = submit(api, ecommerce).json()
    edited = BODY + 'emit_log(get_user("U-1").message)\n'
    submission_approve(
        submission=Submission.objects.get(pk=state["id"]), user=reviewer, body=edited
    )
    run = Run.objects.get()
    assert sorted(run.allowed_tools) == ["get_orders", "get_user"] and run.allowed_by_reviewer


def test_a_member_running_a_script_in_the_playground_may_call_every_tool(ecommerce, member) -> None:
    session = session_open(user=member, sandbox=ecommerce, task="Totals")
    attempt = attempt_record(session=session, source="human", prompt="", body=BODY)
    attempt_run(attempt=attempt, user=member)
    assert Run.objects.get().allowed_tools is None
