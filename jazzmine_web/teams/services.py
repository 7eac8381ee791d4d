"""Writes for teams, memberships and API tokens."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from ..studio.live import group_send
from .models import ApiToken, Membership, Role, Team
from .signals import api_token_revoked

TOKEN_PREFIX = "jzm_"


def hash_token(raw: str) -> str:
    """Return the stored form of a raw token."""
    return hashlib.sha256(raw.encode()).hexdigest()


@dataclass(frozen=True)
class IssuedToken:
    """A freshly created token: the row, and the raw value shown exactly once."""

    token: ApiToken
    raw: str


def team_create(*, name: str, slug: str | None = None) -> Team:
    """Create a team."""
    return Team.objects.create(name=name, slug=slug or slugify(name))


def team_get_or_create(*, name: str, slug: str) -> Team:
    """Return the team with this slug, creating it when missing."""
    team, _ = Team.objects.get_or_create(slug=slug, defaults={"name": name})
    return team


def membership_set(*, team: Team, user: AbstractBaseUser, role: str = Role.MEMBER) -> Membership:
    """Add a user to a team with a role, or change the role they have."""
    membership, created = Membership.objects.get_or_create(
        team=team, user=user, defaults={"role": role}
    )
    if not created and membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


def membership_remove(*, team: Team, user: AbstractBaseUser) -> None:
    """Take a user out of a team."""
    Membership.objects.filter(team=team, user=user).delete()


def api_token_create(*, user: AbstractBaseUser, name: str) -> IssuedToken:
    """Create an API token for a user; the raw value is returned once and never stored."""
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name.strip() or "token",
        prefix=raw[: len(TOKEN_PREFIX) + 6],
        token_hash=hash_token(raw),
    )
    return IssuedToken(token=token, raw=raw)


def api_token_revoke(*, user: AbstractBaseUser, token_id: int) -> bool:
    """Revoke one of a user's tokens; tell whether one was revoked."""
    with transaction.atomic():
        count = ApiToken.objects.filter(pk=token_id, user=user, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
        if count:
            # In the same transaction: a webhook never outlives its token, not even briefly.
            api_token_revoked.send(sender=ApiToken, token_id=token_id)
    if count:
        # Long requests made with the token sleep on this group: they end now, not later.
        transaction.on_commit(
            lambda: group_send(api_token_group(token_id), {"type": "token.revoked"})
        )
    return count > 0


def api_token_group(token_id: int) -> str:
    """Return the channel group that hears when one API token is revoked."""
    return f"api-token-{token_id}"


def api_token_touch(*, token: ApiToken) -> None:
    """Record that a token was just used (at most once a minute, to spare the database)."""
    now = timezone.now()
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
