"""Writes of a sandbox's secret values: stored encrypted, never shown again."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from ..crypto import encrypt
from ..models import Sandbox, SecretValue
from .audit import catalog_change_announce
from .rules import admin_check


def secret_value_set(
    *,
    sandbox: Sandbox,
    name: str,
    value: str,
    user: AbstractBaseUser | None,
    actor: AbstractBaseUser | None = None,
) -> SecretValue:
    """Store (or replace) a secret's value, encrypted; the value is never shown again."""
    admin_check(actor=actor, team=sandbox.team, fields=["secret values"])
    if not value:
        raise ValidationError(f"Give a value for {name!r}, or clear it instead")
    with transaction.atomic():
        had = SecretValue.objects.filter(sandbox=sandbox, name=name).exists()
        secret, _ = SecretValue.objects.update_or_create(
            sandbox=sandbox,
            name=name,
            defaults={"ciphertext": encrypt(value), "set_by": user},
        )
        catalog_change_announce(
            sandbox=sandbox,
            actor=actor or user,
            action="secret_set",
            target=f"secret {name}",
            changes={"value": ("set" if had else "not set", "replaced" if had else "set")},
        )
    return secret


def secret_value_clear(
    *, sandbox: Sandbox, name: str, actor: AbstractBaseUser | None = None
) -> bool:
    """Forget a secret's value; tell whether there was one."""
    admin_check(actor=actor, team=sandbox.team, fields=["secret values"])
    with transaction.atomic():
        deleted, _ = SecretValue.objects.filter(sandbox=sandbox, name=name).delete()
        if deleted:
            catalog_change_announce(
                sandbox=sandbox,
                actor=actor,
                action="secret_cleared",
                target=f"secret {name}",
                changes={"value": ("set", "not set")},
            )
    return deleted > 0
