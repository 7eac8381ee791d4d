"""An agent whose user leaves the sandbox's team during its request gets a 404, not a 500.

Submitting and cancelling answer with the submission as its user may see it, read again after
the change: someone taken out of the team in between (an admin's click, at the same moment)
may see it no more, and the answer built from nothing was a 500 with a traceback. What was
done stays done (the submission stored, the run stopped); the answer says it is out of reach.
"""

from __future__ import annotations

import pytest
from django.db.models.signals import post_save

from jazzmine_web.reviews.models import AuditAction, AuditEntry, Submission, SubmissionStatus
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.teams.services import membership_remove

from .conftest import submit

pytestmark = pytest.mark.django_db


def test_a_submission_stored_as_its_user_leaves_answers_404(api, gated, member, team) -> None:
    def leave(sender, instance, created, **_kwargs) -> None:
        if created:
            membership_remove(team=team, user=member)

    post_save.connect(leave, sender=Submission, dispatch_uid="leave-on-submit")
    try:
        answer = submit(api, gated)
    finally:
        post_save.disconnect(sender=Submission, dispatch_uid="leave-on-submit")
    assert answer.status_code == 404, answer.content
    assert answer.json()["error"]["code"] == "submission_not_found"
    assert Submission.objects.get().status == SubmissionStatus.PENDING  # stored all the same


def test_a_cancel_as_its_user_leaves_answers_404(api, auto, member, team) -> None:
    state = submit(api, auto).json()
    assert state["run"] is not None, state

    def leave(sender, instance, created, **_kwargs) -> None:
        if created and instance.action == AuditAction.RUN_CANCELLED:
            membership_remove(team=team, user=member)

    post_save.connect(leave, sender=AuditEntry, dispatch_uid="leave-on-cancel")
    try:
        answer = api.post(f"/api/v1/submissions/{state['id']}/cancel/")
    finally:
        post_save.disconnect(sender=AuditEntry, dispatch_uid="leave-on-cancel")
    assert answer.status_code == 404, answer.content
    run = Run.objects.get()
    assert (run.status, run.outcome) == (RunStatus.FAILED, "cancelled")  # stopped all the same
