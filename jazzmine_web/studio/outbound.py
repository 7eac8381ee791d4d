"""The deployment's outbound policies: which non-public hosts LLM endpoints and webhooks may reach.

Two lists, because two kinds of people choose the URLs: an LLM endpoint is the operator's (a
local model server on loopback is the usual exception), a webhook any agent's token sets. An
exception made for the first must not let every agent POST to that internal service too.
"""

from __future__ import annotations

import functools

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from jazzmine.net import OutboundPolicy

LLM_SETTING = "JAZZMINE_OUTBOUND_ALLOWED_HOSTS"
WEBHOOK_SETTING = "JAZZMINE_WEBHOOK_ALLOWED_HOSTS"


def outbound_allowed_hosts() -> tuple[str, ...]:
    """Return the hosts LLM endpoints may reach although not public (read per call, so tests
    can change it)."""
    return tuple(getattr(settings, LLM_SETTING))


def outbound_policy() -> OutboundPolicy:
    """Return the policy of LLM endpoints; a malformed entry is a configuration error."""
    return _policy(LLM_SETTING, outbound_allowed_hosts())


def webhook_policy() -> OutboundPolicy:
    """Return the policy of webhooks: their own exceptions, none of the LLM endpoints'."""
    return _policy(WEBHOOK_SETTING, tuple(getattr(settings, WEBHOOK_SETTING)))


@functools.lru_cache(maxsize=8)
def _policy(setting: str, entries: tuple[str, ...]) -> OutboundPolicy:
    try:
        return OutboundPolicy.from_entries(entries)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{setting}: {exc}") from None
