"""Reads for the playground."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from .models import Attempt, LLMSettings, PlaygroundSession


def sessions_for_user(user: Any) -> QuerySet[PlaygroundSession]:
    """Return the user's sessions, most recently used first."""
    return PlaygroundSession.objects.filter(user=user).select_related("sandbox")


def session_for_user(user: Any, session_id: Any) -> PlaygroundSession | None:
    """Return one of the user's sessions, or None."""
    try:
        return sessions_for_user(user).filter(pk=session_id).first()
    except Exception:  # a malformed uuid is simply not found
        return None


def session_attempts(session: PlaygroundSession) -> list[Attempt]:
    """Return a session's attempts in order, with their runs."""
    return list(session.attempts.select_related("run"))


def unified_diff(a: str, b: str, *, a_name: str, b_name: str) -> str:
    """Return a unified diff of two texts (empty when they are equal)."""
    return "".join(
        difflib.unified_diff(
            a.splitlines(keepends=True),
            b.splitlines(keepends=True),
            fromfile=a_name,
            tofile=b_name,
        )
    )


@dataclass(frozen=True)
class Comparison:
    """Two attempts side by side."""

    a: Attempt
    b: Attempt
    script_diff: str
    prompt_diff: str


def attempts_compare(session: PlaygroundSession, a: int, b: int) -> Comparison | None:
    """Compare two attempts of a session by number, or None if either is missing."""
    found = {x.number: x for x in session.attempts.select_related("run").filter(number__in=[a, b])}
    if a not in found or b not in found:
        return None
    first, second = found[a], found[b]
    return Comparison(
        a=first,
        b=second,
        script_diff=unified_diff(
            first.body, second.body, a_name=f"attempt {a}", b_name=f"attempt {b}"
        ),
        prompt_diff=unified_diff(
            first.prompt, second.prompt, a_name=f"prompt {a}", b_name=f"prompt {b}"
        ),
    )


def llm_settings_for(user: Any) -> LLMSettings | None:
    """Return the user's own LLM settings row, if any."""
    return LLMSettings.objects.filter(user=user).first()
