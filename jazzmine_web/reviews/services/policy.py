"""How a sandbox's submissions are reviewed: the policy and its timeout, set by team admins."""

from __future__ import annotations

import functools

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from ...catalog.models import Sandbox
from ...catalog.services import actor_is_admin
from ...runs.lifecycle import runs_let_through_stop
from ..models import AuditAction, ReviewPolicy, SandboxReviewSettings
from ..selectors import review_settings_locked
from .audit import _audit
from .errors import ReviewForbidden, SubmissionInvalid


def review_settings_set(
    *, sandbox: Sandbox, user: AbstractBaseUser, policy: str, timeout_seconds: int
) -> SandboxReviewSettings:
    """Change how a sandbox's submissions are reviewed (team admins and superusers only)."""
    # The catalog's rule, so that the admin site's superuser may here what they may there.
    if not actor_is_admin(actor=user, team=sandbox.team):
        raise ReviewForbidden("not_admin", "Only team admins change a sandbox's review policy.")
    if policy not in ReviewPolicy.values:
        raise SubmissionInvalid("invalid_policy", f"Unknown review policy {policy!r}.")
    if not 10 <= int(timeout_seconds) <= 30 * 86400:
        raise SubmissionInvalid(
            "invalid_timeout", "The review timeout must be between 10 seconds and 30 days."
        )
    with transaction.atomic():
        before = review_settings_locked(sandbox).policy
        row, _ = SandboxReviewSettings.objects.update_or_create(
            sandbox=sandbox,
            defaults={
                "policy": policy,
                "timeout_seconds": int(timeout_seconds),
                "updated_by": user,
            },
        )
        _audit(
            sandbox=sandbox,
            action=AuditAction.POLICY_CHANGED,
            user=user,
            data={"policy": policy, "timeout_seconds": int(timeout_seconds)},
        )
        stricter = _STRICTNESS[ReviewPolicy(policy)] > _STRICTNESS[ReviewPolicy(before)]
        if stricter:
            transaction.on_commit(
                functools.partial(_let_through_stop, sandbox.pk, ReviewPolicy(policy))
            )
    return row


# How much of an agent's script a person reads under each policy, least first.
_STRICTNESS = {ReviewPolicy.NEVER: 0, ReviewPolicy.UNLISTED_TOOLS: 1, ReviewPolicy.ALWAYS: 2}


def _let_through_stop(sandbox_id: int, policy: ReviewPolicy) -> None:
    """Stop what the looser policy let through unread that the new one would have a person read.

    `unlisted_tools` still lets a script through that calls only always-allowed tools, as
    those runs were pinned to; `always` lets nothing through unread.
    """
    runs_let_through_stop(
        sandbox_id=sandbox_id,
        every_tool_only=policy == ReviewPolicy.UNLISTED_TOOLS,
        reason=(
            f"cancelled: the sandbox's review policy became '{policy.label}' after this run "
            "was let through without a person reading it; submit it again to have it read"
        ),
    )
