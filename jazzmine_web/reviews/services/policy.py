"""How a sandbox's submissions are reviewed: the policy and its timeout, set by team admins."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from ...catalog.models import Sandbox
from ...catalog.services import actor_is_admin
from ..models import AuditAction, ReviewPolicy, SandboxReviewSettings
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
    return row
