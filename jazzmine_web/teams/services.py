"""Writes for teams, memberships and API tokens."""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.text import slugify

from ..studio.live import group_send
from .models import ApiToken, Membership, RevokeReason, Role, Team
from .signals import api_token_revoked

TOKEN_PREFIX = "jzm_"
# The HMAC's own purpose: no other HMAC of the password hash under the same key (Django's
# session hash is one) can stand in for a token's binding. Migration 0002 repeats it.
PASSWORD_MAC_SALT = "jazzmine_web.teams.ApiToken.password_mac"


def hash_token(raw: str) -> str:
    """Return the stored form of a raw token."""
    return hashlib.sha256(raw.encode()).hexdigest()


def password_mac(password_hash: str, *, secret: str | None = None) -> str:
    """Return the binding of a token to the password hash it was made under."""
    return salted_hmac(
        PASSWORD_MAC_SALT, password_hash, secret=secret, algorithm="sha256"
    ).hexdigest()


def password_mac_matches(mac: str, password_hash: str) -> bool:
    """Tell whether a token's binding is of this password hash (an empty one never is).

    The keys are those Django signs sessions with: a SECRET_KEY rotated with the old one kept
    in SECRET_KEY_FALLBACKS keeps tokens working, as it keeps people signed in.
    """
    if not mac:
        return False
    return any(
        constant_time_compare(mac, password_mac(password_hash, secret=secret))
        for secret in [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]
    )


def _password_hash_now(user: AbstractBaseUser) -> str:
    """Return the user's password hash as stored now, not as this instance loaded it.

    The check of the password just before (a login's) may have rehashed it (a hasher
    upgrade): bound to the hash the request's user was loaded with, the token would be
    born dead.
    """
    stored = get_user_model()._default_manager.filter(pk=user.pk).values_list("password", flat=True)
    return stored.first() or user.password


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


class TokenNameTaken(ValueError):
    """A live token of the user already has the name asked for."""


TOKEN_NAME_TAKEN = (
    "is already another live token's: reviewers tell your agents apart by their tokens' "
    "names, so give this one another name (or revoke that token first)."
)


def api_token_create(*, user: AbstractBaseUser, name: str) -> IssuedToken:
    """Create an API token for a user; the raw value is returned once and never stored.

    The token is bound to the user's password as it is now: a change of it ends the token.
    A name a live token of the user has already raises `TokenNameTaken` (the database
    holds it, for two requests at once too); a blank one is numbered past them.
    """
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    given = name.strip()
    for _ in range(3):  # a blank name numbered as another request took that number
        try:
            with transaction.atomic():
                token = ApiToken.objects.create(
                    user=user,
                    name=_token_name(user, given),
                    prefix=raw[: len(TOKEN_PREFIX) + 6],
                    token_hash=hash_token(raw),
                    password_mac=password_mac(_password_hash_now(user)),
                )
            break
        except IntegrityError:
            if given and given in api_token_names_live(user):
                raise TokenNameTaken(f"The token's name {given!r} {TOKEN_NAME_TAKEN}") from None
            if given:
                raise
    else:
        raise TokenNameTaken("No free name was found for the token: give it one.")
    return IssuedToken(token=token, raw=raw)


def api_token_names_live(user: AbstractBaseUser) -> set[str]:
    """Return the names of the user's tokens that are not revoked."""
    live = ApiToken.objects.filter(user=user, revoked_at__isnull=True)
    return set(live.values_list("name", flat=True))


def _token_name(user: AbstractBaseUser, name: str) -> str:
    """Return a token's name: as given, or numbered past the user's live tokens when blank."""
    if name:
        return name
    taken = api_token_names_live(user)
    number = 1
    while (default := "token" if number == 1 else f"token {number}") in taken:
        number += 1
    return default


def api_token_revoke(
    *, user: AbstractBaseUser, token_id: int, reason: str = RevokeReason.OWNER
) -> bool:
    """Revoke one of a user's tokens, saying why; tell whether one was revoked."""
    return _token_revoke(token_id=token_id, user_id=user.pk, reason=reason)


def _token_revoke(*, token_id: int, user_id: object, reason: str) -> bool:
    with transaction.atomic():
        count = ApiToken.objects.filter(
            pk=token_id, user_id=user_id, revoked_at__isnull=True
        ).update(revoked_at=timezone.now(), revoked_reason=reason)
        if count:
            # In the same transaction: a webhook never outlives its token, not even briefly.
            api_token_revoked.send(sender=ApiToken, token_id=token_id)
    if count:
        # Long requests made with the token sleep on this group: they end now, not later.
        transaction.on_commit(
            lambda: group_send(api_token_group(token_id), {"type": "token.revoked"})
        )
    return count > 0


def api_tokens_revoke_all(*, user: AbstractBaseUser, reason: str) -> int:
    """Revoke every active token of a user (their password changed, they were deactivated).

    One by one through `api_token_revoke`: each token's webhook stops and its long requests
    end, as when its owner revokes it. Return how many were revoked.
    """
    ids = ApiToken.objects.filter(user=user, revoked_at__isnull=True).values_list("pk", flat=True)
    return sum(api_token_revoke(user=user, token_id=pk, reason=reason) for pk in list(ids))


def api_token_ended_why(*, mac: str, password_hash: str, user_active: bool) -> str:
    """Return why a token nobody revoked opens nothing any more ("" while it still opens).

    Its account was deactivated, or the password it was bound to (or the server's key that
    bound it) changed, by a path that revoked nothing: a queryset update, SQL, a new
    `JAZZMINE_SECRET_KEY`. The value is the reason its revoke records.
    """
    if not user_active:
        return RevokeReason.DEACTIVATED
    if not password_mac_matches(mac, password_hash):
        return RevokeReason.UNBOUND
    return ""


# How long the sweep waits before it revokes a token it found ended: a login that upgrades a
# password's hash writes the new hash, then binds the tokens to it, in two statements.
SETTLE_RECHECK_SECONDS = 2.0


def api_tokens_settle(*, recheck_after: float = SETTLE_RECHECK_SECONDS) -> int:
    """Revoke the tokens that open nothing though nobody revoked them; return how many.

    Such a token is refused at once (`teams.auth`), but its list says it is active, its
    pending submissions wait for a reviewer and its webhook is still set, all of which a
    revoke ends (`api_token_revoke`). A token is revoked only when found ended twice,
    `recheck_after` seconds apart, for the same reason: never one read between a hash
    upgrade's two writes.
    """
    found = _tokens_ended(ApiToken.objects.filter(revoked_at__isnull=True))
    if not found:
        return 0
    time.sleep(recheck_after)
    again = _tokens_ended(ApiToken.objects.filter(pk__in=list(found), revoked_at__isnull=True))
    return sum(
        _token_revoke(token_id=token_id, user_id=user_id, reason=reason)
        for token_id, (user_id, reason) in again.items()
        if found.get(token_id) == (user_id, reason)
    )


def _tokens_ended(tokens: QuerySet[ApiToken]) -> dict[int, tuple[object, str]]:
    """Return the ended ones of these tokens: token id -> (its user's id, why it ended)."""
    rows = tokens.values_list("pk", "user_id", "password_mac", "user__password", "user__is_active")
    ended = {}
    for token_id, user_id, mac, password_hash, active in rows.iterator():
        why = api_token_ended_why(mac=mac, password_hash=password_hash, user_active=active)
        if why:
            ended[token_id] = (user_id, why)
    return ended


def api_tokens_rebind(*, user: AbstractBaseUser, old_password_hash: str) -> int:
    """Bind the tokens made under the old hash of an unchanged password to its new hash.

    For a hash upgrade only (Django rehashes a password on login when its hasher changes):
    the password is the same, its tokens stay. A token not bound to the old hash (a change
    that revoked nothing) stays dead. Return how many were bound again.
    """
    old = [
        password_mac(old_password_hash, secret=secret)
        for secret in [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]
    ]
    return ApiToken.objects.filter(user=user, revoked_at__isnull=True, password_mac__in=old).update(
        password_mac=password_mac(user.password)
    )


def api_token_group(token_id: int) -> str:
    """Return the channel group that hears when one API token is revoked."""
    return f"api-token-{token_id}"


def api_token_touch(*, token: ApiToken) -> None:
    """Record that a token was just used (at most once a minute, to spare the database)."""
    now = timezone.now()
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
