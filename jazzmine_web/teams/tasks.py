"""Celery tasks for teams: thin, each calls a service."""

from __future__ import annotations

from celery import shared_task

from .services import api_tokens_settle


@shared_task(name="teams.tokens_settle")
def tokens_settle() -> int:
    """Revoke the API tokens a write around the models ended without revoking them."""
    return api_tokens_settle()
