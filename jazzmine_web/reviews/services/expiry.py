"""Expiry and run ends: what the sweep and lazy reads call, and an agent's cancel of its run."""

from __future__ import annotations

import datetime
import logging
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from ...runs.lifecycle import run_stop
from ...runs.models import RunStatus
from ...teams.models import ApiToken
from ..models import AuditAction, Submission, SubmissionStatus
from .audit import _audit, agent_label
from .errors import ReviewConflict, ReviewForbidden
from .submitting import _after_commit

logger = logging.getLogger(__name__)


def submission_run_cancel(
    *, submission: Submission, user: AbstractBaseUser, token: ApiToken | None = None
) -> bool:
    """Stop the run of a submission for the agent that submitted it; tell whether it was live.

    A queued run ends at once; a running one when its worker has killed the sandbox (within
    a second). A run that already ended is left as it is.
    """
    if submission.submitted_by_id != user.pk:
        raise ReviewForbidden(
            "not_your_submission", "Only the user whose agent submitted it may cancel its run."
        )
    run = submission.run
    if run is None:
        raise ReviewConflict(
            "no_run",
            f"Submission {submission.pk} has no run to cancel (it is {submission.status}).",
        )
    label = agent_label(token, user)
    stopped = run_stop(run_id=run.pk, reason=f"cancelled by {label}")
    if stopped:
        _audit(
            sandbox=submission.sandbox,
            action=AuditAction.RUN_CANCELLED,
            submission=submission,
            user=user,
            token=token,
            sha256=run.code_sha256,
        )
    return stopped


def submissions_expire_overdue(
    *, now: datetime.datetime | None = None, submission_ids: list[Any] | None = None
) -> int:
    """Expire the pending submissions whose review time is up; tell their agents."""
    now = now or timezone.now()
    rows = Submission.objects.filter(status=SubmissionStatus.PENDING, expires_at__lte=now)
    if submission_ids is not None:
        rows = rows.filter(pk__in=submission_ids)
    count = 0
    for submission in rows.select_related("sandbox"):
        # Rounded: `expires_at` is counted from a moment just before the row was created, so
        # the time it waited is a few milliseconds short of the whole seconds it was given.
        waited = round((submission.expires_at - submission.created_at).total_seconds())
        feedback = f"No reviewer decided within {waited} seconds; the script did not run."
        with transaction.atomic():
            changed = Submission.objects.filter(
                pk=submission.pk, status=SubmissionStatus.PENDING
            ).update(status=SubmissionStatus.EXPIRED, decided_at=now, feedback=feedback)
            if not changed:
                continue  # a reviewer decided in the meantime
            submission.status = SubmissionStatus.EXPIRED
            _audit(
                action=AuditAction.EXPIRED,
                sandbox=submission.sandbox,
                submission=submission,
                label="expiry",
                sha256=submission.code_sha256,
                note=feedback,
            )
        _after_commit(submission, webhook_event="submission.expired")
        count += 1
    if count:
        logger.info("expired %d submission(s) nobody reviewed in time", count)
    return count


def submission_note_run_finished(*, submission_id: Any) -> bool:
    """Record a submission's run end once (audit and webhook); tell whether this call did it."""
    submission = (
        Submission.objects.select_related("sandbox", "run").filter(pk=submission_id).first()
    )
    if submission is None or submission.run is None:
        return False
    run = submission.run
    if run.status not in RunStatus.finished():
        return False
    with transaction.atomic():
        changed = Submission.objects.filter(
            pk=submission.pk, run_finished_noted_at__isnull=True
        ).update(run_finished_noted_at=timezone.now())
        if not changed:
            return False
        _audit(
            action=AuditAction.RUN_FINISHED,
            sandbox=submission.sandbox,
            submission=submission,
            label="sandbox",
            sha256=run.code_sha256,
            note=run.message,
            data={"run_id": str(run.pk), "status": run.status, "outcome": run.outcome},
        )
    _after_commit(submission, webhook_event="run.finished")
    return True


def submissions_note_finished_runs() -> int:
    """Note every approved submission whose run ended without being noted (a missed callback)."""
    ids = list(
        Submission.objects.filter(
            run__isnull=False,
            run_finished_noted_at__isnull=True,
            run__status__in=RunStatus.finished(),
        ).values_list("pk", flat=True)
    )
    return sum(submission_note_run_finished(submission_id=pk) for pk in ids)
