"""Even if the gate's reading slipped, a run the policy let through cannot call a reviewed tool.

The reading is replaced by one that sees nothing (the worst slip), a script calling get_user
(not always-allowed) goes in through the agent API and is auto-approved, and the real runner
executes it: the sandbox refuses the call and says so in the run's events.
"""

from __future__ import annotations

import pytest

from jazzmine.gate import Reading
from jazzmine_web.reviews.models import ReviewPolicy
from jazzmine_web.runs.models import Run, RunStatus

from .conftest import allow_tools, set_policy, submit

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.docker]

PYTHON = """\
orders = get_orders(status="delivered")
user = get_user("U-1")
emit_result({"orders_ok": orders.success, "user_ok": user.success, "user": user.data,
             "message": user.message})
"""

BASH = """\
get_orders --status delivered > /dev/null && echo orders-ok
get_user --user_id U-1
"""


@pytest.fixture
def slipped(monkeypatch, ecommerce):
    """Make the gate read every script as calling nothing, and let the policy decide."""
    monkeypatch.setattr("jazzmine_web.catalog.selectors.read_calls", lambda *a, **k: Reading())
    set_policy(ecommerce, ReviewPolicy.UNLISTED_TOOLS)
    allow_tools(ecommerce, "get_orders")
    return ecommerce


def _run_of(state: dict, worker) -> Run:
    assert state["status"] == "auto_approved", state
    run = Run.objects.get(pk=state["run"]["id"])
    assert list(run.allowed_tools) == ["get_orders"]
    worker.future(run.pk).result(timeout=240)
    run.refresh_from_db()
    return run


def _events_text(run: Run) -> str:
    return " ".join(str(e.data) for e in run.events.order_by("seq"))


def test_a_python_run_let_through_by_the_policy_is_refused_the_reviewed_tool(
    api, slipped, worker
) -> None:
    run = _run_of(submit(api, slipped, body=PYTHON).json(), worker)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.result["orders_ok"] is True
    assert run.result["user_ok"] is False and run.result["user"] is None
    assert "needs a person's approval" in run.result["message"]
    events = _events_text(run)
    assert "refused a call to tool 'get_user'" in events
    assert "Ada Lovelace" not in events


def test_a_bash_run_let_through_by_the_policy_is_refused_the_reviewed_tool(
    api, slipped, worker
) -> None:
    run = _run_of(submit(api, slipped, body=BASH, language="bash").json(), worker)
    assert run.status == RunStatus.FAILED
    assert "orders-ok" in run.result["stdout"]
    events = _events_text(run)
    assert "Ada Lovelace" not in events
    assert "get_user" in events and "approval" in events


def test_a_reviewer_approved_run_may_call_the_same_tool(api, ecommerce, reviewer, worker) -> None:
    from jazzmine_web.reviews.models import Submission
    from jazzmine_web.reviews.services import submission_approve

    set_policy(ecommerce, ReviewPolicy.UNLISTED_TOOLS)
    allow_tools(ecommerce, "get_orders")
    state = submit(api, ecommerce, body=PYTHON).json()
    assert state["status"] == "pending"
    submission = submission_approve(
        submission=Submission.objects.get(pk=state["id"]), user=reviewer
    )
    worker.future(submission.run.pk).result(timeout=240)
    run = Run.objects.get(pk=submission.run.pk)
    assert sorted(run.allowed_tools) == ["get_orders", "get_user"] and run.allowed_by_reviewer
    assert run.status == RunStatus.SUCCEEDED and run.result["user_ok"] is True
