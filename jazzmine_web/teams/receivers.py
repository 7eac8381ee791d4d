"""A user's API tokens end with their password, or with their account: revoked on the save.

Any path that saves a user goes through here: the password page, the admin's password form for
another person, a reset, `set_password` in a service or management command, the admin's
"active" box. A token minted from a stolen session is the leak a password change is meant to
lock out, as it signs out every other session; and a deactivated person's agents stop with
them. Revoked through the service, so each token's webhook stops and its long requests end,
and its list says why. A change that bypasses `save()` (a queryset update) revokes nothing,
and still ends the tokens: each is bound to the password hash it was made under (`teams.auth`).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.hashers import get_hasher, identify_hasher, is_password_usable
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver

from .models import RevokeReason
from .services import api_tokens_rebind, api_tokens_revoke_all

# What the check before the save found, for the one after it (which knows the save happened).
_PENDING = "_jazzmine_token_change"
_REBIND = "rebind"


def _rehashed(old: str, new: str) -> bool:
    """Tell whether a new hash is an upgrade of the old one by the preferred hasher.

    It is what Django does on a login when the hasher (or its work factor) changed: the same
    password, hashed anew. Nothing else in Django writes such a hash without `set_password`.
    """
    if not (is_password_usable(old) and is_password_usable(new)):
        return False
    try:
        old_hasher, new_hasher = identify_hasher(old), identify_hasher(new)
    except ValueError:
        return False
    preferred = get_hasher()
    outdated = old_hasher.algorithm != preferred.algorithm or preferred.must_update(old)
    current = new_hasher.algorithm == preferred.algorithm and not preferred.must_update(new)
    return outdated and current


def _change(instance: Any, old: dict[str, Any], fields: set[str]) -> str | None:
    """Return what a save does to the user's tokens: a revoke's reason, a rebind, or nothing."""
    if "is_active" in fields and old["is_active"] and not instance.is_active:
        return RevokeReason.DEACTIVATED
    if "password" not in fields or old["password"] == instance.password:
        return None
    # Django's rehash on login saves only the password and never sets `_password` (which
    # `set_password` does): "Password hash upgrades shouldn't be considered password changes."
    upgrade = (
        getattr(instance, "_password", None) is None
        and fields == {"password"}
        and _rehashed(old["password"], instance.password)
    )
    return _REBIND if upgrade else RevokeReason.PASSWORD


@receiver(pre_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="teams.tokens_before_save")
def _before_user_save(
    sender: Any,
    instance: Any,
    raw: bool = False,
    update_fields: Any = None,
    **_kwargs: Any,
) -> None:
    instance.__dict__.pop(_PENDING, None)
    # A new account has no token; a fixture being loaded (`raw`) is stored as it is.
    if raw or instance._state.adding or instance.pk is None:
        return
    fields = {"password", "is_active"}
    if update_fields is not None:
        fields &= set(update_fields)
        if not fields:
            return  # a login's `last_login`, a name: no query more
    old = sender._default_manager.filter(pk=instance.pk).values("password", "is_active").first()
    if old is None:
        return
    change = _change(instance, old, fields)
    if change is not None:
        instance.__dict__[_PENDING] = (change, old["password"])


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="teams.tokens_after_save")
def _after_user_save(sender: Any, instance: Any, raw: bool = False, **_kwargs: Any) -> None:
    pending = instance.__dict__.pop(_PENDING, None)
    if raw or pending is None:
        return
    change, old_password = pending
    if change == _REBIND:
        api_tokens_rebind(user=instance, old_password_hash=old_password)
    else:
        api_tokens_revoke_all(user=instance, reason=change)
