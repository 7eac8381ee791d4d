"""Deciding: who may decide on a pending submission, and its approval or rejection."""

from __future__ import annotations

import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from jazzmine.core.tools.generator import assembled_body

from ...runs.models import code_sha256
from ...runs.services import script_check
from ...teams.models import Role
from ...teams.selectors import user_has_team_role, user_holds_team_role_locked
from ..analysis import normalise_body, same_body
from ..models import AuditAction, Submission, SubmissionStatus
from .audit import _audit
from .errors import EditRefused, ReviewConflict, ReviewForbidden, SubmissionInvalid
from .expiry import submissions_expire_overdue
from .submitting import _after_commit, _approve_and_start


def submission_refresh(*, submission: Submission) -> Submission:
    """Return the submission as stored now, expired first when it is overdue (fail closed)."""
    if submission.status == SubmissionStatus.PENDING and _overdue(submission, timezone.now()):
        submissions_expire_overdue(submission_ids=[submission.pk])
    return Submission.objects.select_related(
        "sandbox", "sandbox__team", "api_token", "submitted_by", "decided_by", "run", "previous"
    ).get(pk=submission.pk)


def _overdue(submission: Submission, now: datetime.datetime) -> bool:
    return submission.expires_at is not None and submission.expires_at <= now


def submission_decide_check(*, submission: Submission, user: AbstractBaseUser) -> None:
    """Raise unless this person may decide on this submission now."""
    if not user_has_team_role(user=user, team=submission.sandbox.team, role=Role.REVIEWER):
        raise ReviewForbidden("not_reviewer", "Only reviewers of this team decide on submissions.")
    if submission.status != SubmissionStatus.PENDING:
        raise ReviewConflict(
            "already_decided", f"This submission is {submission.get_status_display().lower()}."
        )


def _check_not_own(*, submission: Submission, user: AbstractBaseUser) -> None:
    if submission.submitted_by_id is not None and submission.submitted_by_id == user.pk:
        raise ReviewForbidden(
            "self_approval",
            "Your own API token submitted this script; another reviewer must approve it.",
        )


def _claim(
    *, submission: Submission, status: str, user: AbstractBaseUser, feedback: str = ""
) -> None:
    """Move a pending submission to a decision, or fail if someone (or the clock) got there first.

    The reviewer's role is read again here, under lock, in the decision's transaction: the check
    before it (`submission_decide_check`) may be stale by the time an edit has been validated.
    """
    if not user_holds_team_role_locked(user=user, team=submission.sandbox.team, role=Role.REVIEWER):
        raise ReviewForbidden("not_reviewer", "Only reviewers of this team decide on submissions.")
    now = timezone.now()
    claimed = Submission.objects.filter(
        pk=submission.pk, status=SubmissionStatus.PENDING, expires_at__gt=now
    ).update(status=status, decided_at=now, decided_by=user, feedback=feedback)
    if not claimed:
        raise ReviewConflict("already_decided", "This submission was decided or expired meanwhile.")
    submission.status, submission.decided_at = status, now
    submission.decided_by, submission.feedback = user, feedback


def submission_approve(
    *, submission: Submission, user: AbstractBaseUser, body: str | None = None, note: str = ""
) -> Submission:
    """Approve a pending script, or a reviewer's edit of it (validated again), and start its run."""
    submission = submission_refresh(submission=submission)
    submission_decide_check(submission=submission, user=user)
    _check_not_own(submission=submission, user=user)
    # The reviewer read (and may have edited) the body that runs, not the agent's raw answer.
    shown = assembled_body(submission.script)
    final_body = shown if body is None else normalise_body(body)
    edited = not same_body(final_body, shown)
    if edited:
        if not final_body.strip():
            raise SubmissionInvalid("missing_field", "The edited script is empty.")
        script, violations = script_check(
            sandbox=submission.sandbox, body=final_body, language=submission.language
        )
        if violations:
            raise EditRefused(violations)
    else:
        script = submission.script
    status = SubmissionStatus.EDITED_AND_APPROVED if edited else SubmissionStatus.APPROVED
    sha = code_sha256(script)
    with transaction.atomic():
        _claim(submission=submission, status=status, user=user, feedback=note)
        if edited:
            _audit(
                action=AuditAction.EDITED,
                sandbox=submission.sandbox,
                submission=submission,
                user=user,
                sha256=sha,
                data={"original_sha256": submission.code_sha256},
            )
        _audit(
            action=AuditAction.EDITED_AND_APPROVED if edited else AuditAction.APPROVED,
            sandbox=submission.sandbox,
            submission=submission,
            user=user,
            sha256=sha,
            note=note,
        )
        _approve_and_start(
            submission=submission, body=final_body, script=script, user=user, source="review"
        )
    _after_commit(submission, webhook_event="submission.decided")
    return submission_refresh(submission=submission)


def submission_reject(
    *, submission: Submission, user: AbstractBaseUser, feedback: str
) -> Submission:
    """Reject a pending script with feedback the agent's next prompt will quote."""
    submission = submission_refresh(submission=submission)
    submission_decide_check(submission=submission, user=user)
    feedback = (feedback or "").strip()
    if not feedback:
        raise SubmissionInvalid(
            "feedback_required", "Say why it is rejected: the agent's next attempt reads it."
        )
    with transaction.atomic():
        _claim(
            submission=submission, status=SubmissionStatus.REJECTED, user=user, feedback=feedback
        )
        _audit(
            action=AuditAction.REJECTED,
            sandbox=submission.sandbox,
            submission=submission,
            user=user,
            sha256=submission.code_sha256,
            note=feedback,
        )
    _after_commit(submission, webhook_event="submission.decided")
    return submission_refresh(submission=submission)
