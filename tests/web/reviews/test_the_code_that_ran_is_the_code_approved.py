from __future__ import annotations

import pytest

from jazzmine_web.reviews.models import AuditEntry, Submission
from jazzmine_web.reviews.services import EditRefused, submission_approve
from jazzmine_web.runs.models import Run, RunStatus, code_sha256
from tests.waiting import wait_until

from .conftest import submit

pytestmark = [pytest.mark.docker, pytest.mark.django_db(transaction=True)]

EDITED = """\
orders = get_orders(status="delivered")
emit_intermediate("orders", {"count": len(orders.data["orders"])})
emit_result({"total": sum(o["price"] for o in orders.data["orders"]), "edited": True})
"""


def finished(run: Run, worker) -> Run:
    future = worker.future(run.pk)
    if future is not None:
        future.result(timeout=180)
    run.refresh_from_db()
    return run


def test_an_approved_script_runs_with_exactly_the_approved_hash(api, ecommerce, reviewer, worker):
    state = submit(api, ecommerce).json()
    submission = submission_approve(
        submission=Submission.objects.get(pk=state["id"]), user=reviewer
    )
    run = finished(submission.run, worker)
    assert run.status == RunStatus.SUCCEEDED and run.result == {"total": 202.25}
    assert run.source == "review" and run.created_by == reviewer
    assert submission.approved_sha256 == code_sha256(run.script) == run.code_sha256
    assert submission.approved_sha256 == submission.code_sha256  # not edited
    audit = {e.action: e for e in AuditEntry.objects.filter(submission=submission)}
    assert audit["approved"].code_sha256 == run.code_sha256
    assert audit["run_started"].code_sha256 == run.code_sha256
    assert audit["approved"].actor_user == reviewer


def test_an_edited_script_is_what_runs_and_what_the_audit_hashes(api, ecommerce, reviewer, worker):
    state = submit(api, ecommerce).json()
    submission = submission_approve(
        submission=Submission.objects.get(pk=state["id"]), user=reviewer, body=EDITED
    )
    assert submission.status == "edited_and_approved"
    run = finished(submission.run, worker)
    assert run.body == EDITED and run.result["edited"] is True
    assert submission.approved_sha256 == run.code_sha256 != submission.code_sha256
    actions = list(
        AuditEntry.objects.filter(submission=submission)
        .order_by("pk")
        .values_list("action", "code_sha256")
    )
    assert actions[:2] == [("submitted", submission.code_sha256), ("edited", run.code_sha256)]
    assert ("edited_and_approved", run.code_sha256) in actions
    # The agent hears of the edit, with the body that ran.
    waited = api.get(f"/api/v1/submissions/{state['id']}/wait/?timeout=30").json()
    assert waited["final"] and waited["edited"] and waited["approved_body"] == EDITED
    assert waited["run"]["code_sha256"] == waited["approved_sha256"]


def test_the_run_end_is_audited_with_the_hash_that_ran(api, ecommerce, reviewer, worker):

    state = submit(api, ecommerce).json()
    submission = submission_approve(
        submission=Submission.objects.get(pk=state["id"]), user=reviewer
    )
    run = finished(submission.run, worker)
    entry = wait_until(
        lambda: AuditEntry.objects.filter(submission=submission, action="run_finished").first(),
        timeout=15,
        message="the run's end was never audited",
    )
    assert entry.code_sha256 == run.code_sha256 == submission.approved_sha256
    assert entry.data["status"] == "succeeded"


def test_an_edit_with_violations_is_refused_and_nothing_runs(api, ecommerce, reviewer):
    state = submit(api, ecommerce).json()
    with pytest.raises(EditRefused) as refused:
        submission_approve(
            submission=Submission.objects.get(pk=state["id"]),
            user=reviewer,
            body="import subprocess\nemit_result(1)\n",
        )
    assert any("import" in v for v in refused.value.violations)
    assert Submission.objects.get(pk=state["id"]).status == "pending"
    assert Run.objects.count() == 0
