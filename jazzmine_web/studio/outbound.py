"""The deployment's outbound policy: which non-public hosts webhooks and LLM endpoints may reach."""

from __future__ import annotations

import functools

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from jazzmine.net import OutboundPolicy


def outbound_allowed_hosts() -> tuple[str, ...]:
    """Return `JAZZMINE_OUTBOUND_ALLOWED_HOSTS` as given (read per call, so tests can change it)."""
    return tuple(settings.JAZZMINE_OUTBOUND_ALLOWED_HOSTS)


def outbound_policy() -> OutboundPolicy:
    """Return the policy the setting makes; a malformed entry is a configuration error."""
    return _policy(outbound_allowed_hosts())


@functools.lru_cache(maxsize=8)
def _policy(entries: tuple[str, ...]) -> OutboundPolicy:
    try:
        return OutboundPolicy.from_entries(entries)
    except ValueError as exc:
        raise ImproperlyConfigured(f"JAZZMINE_OUTBOUND_ALLOWED_HOSTS: {exc}") from None
