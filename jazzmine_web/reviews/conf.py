"""The review app's settings: Django settings win, then env vars, then embedded defaults."""

from __future__ import annotations

from django.conf import settings

from ..env import env_float, env_int

_DEFAULTS = {
    # Seconds between sweeps that expire overdue submissions and catch up on finished runs.
    "JAZZMINE_REVIEW_SWEEP_SECONDS": lambda: env_float("JAZZMINE_REVIEW_SWEEP_SECONDS", 5.0),
    # Longest a single long-poll `wait` request may hold on.
    "JAZZMINE_REVIEW_MAX_WAIT_SECONDS": lambda: env_float("JAZZMINE_REVIEW_MAX_WAIT_SECONDS", 60.0),
    # Longest an event stream stays open.
    "JAZZMINE_REVIEW_MAX_STREAM_SECONDS": lambda: env_float(
        "JAZZMINE_REVIEW_MAX_STREAM_SECONDS", 600.0
    ),
    # Webhooks: first retry after this many seconds, doubling each time, up to max attempts.
    "JAZZMINE_WEBHOOK_BACKOFF_SECONDS": lambda: env_float("JAZZMINE_WEBHOOK_BACKOFF_SECONDS", 2.0),
    "JAZZMINE_WEBHOOK_MAX_ATTEMPTS": lambda: env_int("JAZZMINE_WEBHOOK_MAX_ATTEMPTS", 6),
    "JAZZMINE_WEBHOOK_TIMEOUT_SECONDS": lambda: env_float("JAZZMINE_WEBHOOK_TIMEOUT_SECONDS", 10.0),
}


def setting(name: str) -> float:
    """Return one review setting (read at call time, so tests can override it)."""
    if hasattr(settings, name):
        return getattr(settings, name)
    return _DEFAULTS[name]()
