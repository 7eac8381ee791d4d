"""A revoked token's pending submissions leave the queue: no reviewer is asked to run them.

A token is revoked because it leaked, because its owner's password changed, or because they
left: a script it submitted and still waiting is not one a reviewer should approve on its
word. It used to stay in the queue, and an approval ran it. Now it is withdrawn, saying why,
in the revoke's own transaction; what was decided already is left as it was.
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.reviews.models import AuditAction, AuditEntry, Submission, SubmissionStatus
from jazzmine_web.reviews.services import submission_approve
from jazzmine_web.reviews.services.errors import ReviewConflict
from jazzmine_web.teams.services import api_token_create, api_token_revoke

from .conftest import submit

pytestmark = pytest.mark.django_db


def pending(api, sandbox) -> Submission:
    state = submit(api, sandbox).json()
    assert state["status"] == "pending", state
    return Submission.objects.get(pk=state["id"])


def test_revoking_a_token_withdraws_what_it_left_waiting(api, gated, issued, member, reviewer):
    first, second = pending(api, gated), pending(api, gated)
    assert api_token_revoke(user=member, token_id=issued.token.pk)
    for submission in (first, second):
        submission.refresh_from_db()
        assert submission.status == SubmissionStatus.WITHDRAWN
        assert "its API token was revoked" in submission.feedback
        assert AuditEntry.objects.filter(
            submission=submission, action=AuditAction.WITHDRAWN
        ).exists()
        # A reviewer who had the page open is refused: nothing runs.
        with pytest.raises(ReviewConflict):
            submission_approve(submission=submission, user=reviewer)
        submission.refresh_from_db()
        assert submission.run is None


def test_a_password_change_withdraws_them_too(api, gated, member):
    submission = pending(api, gated)
    member.set_password("a-new-long-password-1")
    member.save()
    submission.refresh_from_db()
    assert submission.status == SubmissionStatus.WITHDRAWN


def test_what_was_decided_and_other_tokens_submissions_stay(api, gated, issued, member, reviewer):
    decided = pending(api, gated)
    submission_approve(submission=decided, user=reviewer)
    other = api_token_create(user=member, name="other-bot")
    kept = pending(Client(HTTP_AUTHORIZATION=f"Bearer {other.raw}"), gated)
    api_token_revoke(user=member, token_id=issued.token.pk)
    decided.refresh_from_db()
    kept.refresh_from_db()
    assert decided.status == SubmissionStatus.APPROVED
    assert kept.status == SubmissionStatus.PENDING
