"""Reads for teams, roles and tokens: the permission helpers every app uses."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet

from .models import USER_MEMBERSHIPS, ApiToken, Membership, RevokeReason, Role, Team
from .services import api_token_ended_why

AnyUser = AbstractBaseUser | AnonymousUser


def teams_for_user(user: AnyUser) -> QuerySet[Team]:
    """Return the teams a user belongs to (none for anonymous users)."""
    if not user.is_authenticated:
        return Team.objects.none()
    return Team.objects.filter(memberships__user=user).distinct()


def membership_for(*, user: AnyUser, team: Team) -> Membership | None:
    """Return a user's membership of a team, if any."""
    if not user.is_authenticated:
        return None
    return Membership.objects.filter(user=user, team=team).first()


def user_has_team_role(*, user: AnyUser, team: Team, role: str = Role.MEMBER) -> bool:
    """Tell whether a user is in a team with at least this role."""
    membership = membership_for(user=user, team=team)
    return membership is not None and membership.has_role(role)


def user_holds_team_role_locked(*, user: AnyUser, team: Team, role: str) -> bool:
    """Tell whether a user still has this role, locking the membership until the transaction ends.

    For a decision taken in the same transaction: a removal or downgrade committed meanwhile is
    seen here, and one coming later waits for the decision (on SQLite the transaction's write
    lock serialises them the same way).
    """
    if not user.is_authenticated:
        return False
    membership = Membership.objects.select_for_update().filter(user=user, team=team).first()
    return membership is not None and membership.has_role(role)


def team_ids_with_role(*, user: AnyUser, role: str = Role.MEMBER) -> list[int]:
    """Return the ids of the teams where a user has at least this role."""
    if not user.is_authenticated:
        return []
    # Unordered, and of a fixed shape: every permission check asks it, and the queryset (whose
    # default ordering joins the team and user tables) cost more to compile than to run.
    return [m.team_id for m in USER_MEMBERSHIPS.all(user.pk) if m.has_role(role)]


def api_tokens_for_user(user: AbstractBaseUser) -> QuerySet[ApiToken]:
    """Return a user's tokens, newest first, revoked ones included."""
    return ApiToken.objects.filter(user=user)


def api_tokens_listed(user: AbstractBaseUser) -> list[ApiToken]:
    """Return a user's tokens for their list, each with `ended`: why it no longer opens.

    "" for a token that opens the API, and for one revoked (its revoke says why). A token
    ended by a write that revoked nothing says so at once, before the sweep revokes it.
    """
    tokens = list(api_tokens_for_user(user))
    for token in tokens:
        why = ""
        if token.revoked_at is None:
            why = api_token_ended_why(
                mac=token.password_mac, password_hash=user.password, user_active=user.is_active
            )
        token.ended = RevokeReason(why).label if why else ""  # type: ignore[attr-defined]
    return tokens
