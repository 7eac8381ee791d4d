"""The rows a management command names by its options: a sandbox, an author; refused if absent."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.management.base import CommandError

from ..models import Sandbox


def sandbox_named(*, team: str, name: str) -> Sandbox:
    """Return the sandbox `name` of the team with slug `team`, or refuse the command."""
    sandbox = Sandbox.objects.filter(team__slug=team, name=name).first()
    if sandbox is None:
        raise CommandError(f"No sandbox {name!r} in team {team!r}")
    return sandbox


def author_named(username: str | None) -> AbstractBaseUser | None:
    """Return the user recorded as the versions' author, none when not given, or refuse."""
    if not username:
        return None
    author = get_user_model().objects.filter(username=username).first()
    if author is None:
        raise CommandError(f"No user {username!r}")
    return author
