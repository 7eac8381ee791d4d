from __future__ import annotations

from django.apps import AppConfig


class TeamsConfig(AppConfig):
    """Teams, their members' roles, and per-user API tokens."""

    name = "jazzmine_web.teams"
    label = "teams"

    def ready(self) -> None:
        # Connects the receivers that revoke a user's tokens when their password changes, and
        # those that tell a person's open pages their teams changed.
        from . import live, receivers  # noqa: F401
