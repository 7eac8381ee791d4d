"""An agent takes back a script it submitted, while it still waits for a reviewer."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models.signals import post_delete, pre_delete
from django.dispatch import receiver
from django.utils import timezone

from ...teams.models import ApiToken, Membership
from ...teams.signals import api_token_revoked
from ..models import AuditAction, Submission, SubmissionStatus
from .audit import _audit, agent_label
from .deciding import submission_refresh
from .errors import ReviewConflict, ReviewForbidden, SubmissionInvalid
from .submitting import _after_commit

MAX_REASON_CHARS = 2_000
TOKEN_REVOKED = "its API token was revoked"
TOKEN_DELETED = "its API token was deleted"
LEFT_TEAM = "the person whose agent sent it left the team"


def submission_withdraw(
    *,
    submission: Submission,
    user: AbstractBaseUser,
    token: ApiToken | None = None,
    reason: str = "",
) -> Submission:
    """Withdraw a pending submission of this user's agent: it leaves the queue and never runs.

    Only while nobody decided: a reviewer's decision, an expiry or an earlier withdrawal that
    got there first wins (the update is conditional on the row still being pending).
    """
    if submission.submitted_by_id != user.pk:
        raise ReviewForbidden(
            "not_your_submission", "Only the user whose agent submitted it may withdraw it."
        )
    if not isinstance(reason, str) or len(reason) > MAX_REASON_CHARS:
        raise SubmissionInvalid(
            "invalid_field", f"'reason' must be text of at most {MAX_REASON_CHARS} characters."
        )
    submission = submission_refresh(submission=submission)  # an overdue one expires first
    label = agent_label(token, user)
    note = f"Withdrawn by {label}" + (f": {reason.strip()}" if reason.strip() else ".")
    now = timezone.now()
    with transaction.atomic():
        withdrawn = Submission.objects.filter(
            pk=submission.pk, status=SubmissionStatus.PENDING
        ).update(status=SubmissionStatus.WITHDRAWN, decided_at=now, feedback=note)
        if not withdrawn:
            status = Submission.objects.get(pk=submission.pk).get_status_display().lower()
            raise ReviewConflict(
                "not_pending",
                f"This submission is {status}: only one waiting for review can be withdrawn.",
            )
        submission.status = SubmissionStatus.WITHDRAWN  # what the audit and the queue are told
        _audit(
            action=AuditAction.WITHDRAWN,
            sandbox=submission.sandbox,
            submission=submission,
            user=user,
            token=token,
            sha256=submission.code_sha256,
            note=reason.strip(),
        )
    _after_commit(submission, webhook_event="submission.withdrawn")
    return submission_refresh(submission=submission)


@receiver(pre_delete, sender=ApiToken, dispatch_uid="reviews.withdrawing.token_deleted")
def _on_api_token_deleted(*, instance: ApiToken, **_kwargs: Any) -> None:
    """Withdraw what a deleted token's agent had waiting, as a revoke does.

    An admin deletes a leaked token (or its owner's account, and the token with it) rather
    than revoke it: its submissions would otherwise wait, approvable, with no token named.
    """
    _withdraw_pending(reason=TOKEN_DELETED, api_token_id=instance.pk)


@receiver(api_token_revoked, dispatch_uid="reviews.withdrawing.token_revoked")
def _on_api_token_revoked(*, token_id: int, **_kwargs: Any) -> None:
    """Withdraw what a revoked token's agent still had waiting for a reviewer.

    A token is revoked because it leaked, or its owner's password changed, or they left: a
    script it submitted then is not one a reviewer should be asked to let run. In the revoke's
    transaction, so that no approval lands between the two.
    """
    _withdraw_pending(reason=TOKEN_REVOKED, api_token_id=token_id)


@receiver(post_delete, sender=Membership, dispatch_uid="reviews.withdrawing.member_left")
def _on_member_left(*, instance: Membership, **_kwargs: Any) -> None:
    """Withdraw what a person's agents had waiting in a team they left (or were removed from).

    A reviewer would otherwise approve, and start under their own name, a script sent by
    someone no longer in the team (deactivating the account already withdraws it all).
    """
    # Once the removal is committed: when the account itself is being deleted, its rows are
    # already cleared of it by now, and an audit entry naming it would outlive it. Those
    # submissions went with the account's tokens (`_on_api_token_deleted`).
    user_id, team_id = instance.user_id, instance.team_id
    transaction.on_commit(
        lambda: _withdraw_pending(
            reason=LEFT_TEAM, submitted_by_id=user_id, sandbox__team_id=team_id
        )
    )


def _withdraw_pending(*, reason: str, **which: Any) -> None:
    pending = Submission.objects.filter(status=SubmissionStatus.PENDING, **which).select_related(
        "sandbox", "submitted_by", "api_token"
    )
    for submission in pending:
        try:
            submission_withdraw(
                submission=submission,
                user=submission.submitted_by,
                token=submission.api_token,
                reason=reason,
            )
        except ReviewConflict:
            continue  # decided or expired meanwhile: it is no longer waiting
