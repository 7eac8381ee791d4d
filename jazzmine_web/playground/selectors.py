"""Reads for the playground."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from ..catalog.selectors import sandboxes_for_user
from ..studio.diffs import unified_diff
from .models import Attempt, LLMSettings, PlaygroundSession


def sessions_for_user(user: Any) -> QuerySet[PlaygroundSession]:
    """Return the user's sessions in sandboxes they may still see, most recently used first.

    A session shows its sandbox's current prompt (tools, descriptions) and its attempts: one
    opened before its user left the team must not keep reading the team's sandbox.
    """
    return PlaygroundSession.objects.filter(
        user=user, sandbox__in=sandboxes_for_user(user)
    ).select_related("sandbox")


def session_for_user(user: Any, session_id: Any) -> PlaygroundSession | None:
    """Return one of the user's sessions they may still open, or None."""
    if isinstance(session_id, uuid.UUID):
        pk = session_id
    else:
        try:
            pk = uuid.UUID(str(session_id))
        except ValueError:  # a malformed id (or none) is simply not found
            return None
    return sessions_for_user(user).filter(pk=pk).first()


def session_attempts(session: PlaygroundSession) -> list[Attempt]:
    """Return a session's attempts in order, with their runs."""
    return list(session.attempts.select_related("run"))


def attempt_numbers(session: PlaygroundSession) -> list[int]:
    """Return the numbers of a session's attempts, in order."""
    return list(session.attempts.order_by("number").values_list("number", flat=True))


@dataclass(frozen=True)
class Comparison:
    """Two attempts side by side."""

    a: Attempt
    b: Attempt
    script_diff: str
    prompt_diff: str

    @property
    def task(self) -> str | None:
        """Return the task both attempts were made for, or None if they differ or one's is unknown.

        Not the session's: it holds only the latest task, which older attempts never saw.
        """
        a, b = self.a.task, self.b.task
        if a is None or b is None or a.strip() != b.strip():
            return None
        return a.strip()

    @property
    def pair(self) -> tuple[Attempt, Attempt]:
        """Return both attempts, for the rows a template draws the same way for each."""
        return self.a, self.b


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
            first.body, second.body, old_name=f"attempt {a}", new_name=f"attempt {b}"
        ),
        prompt_diff=unified_diff(
            first.prompt, second.prompt, old_name=f"prompt {a}", new_name=f"prompt {b}"
        ),
    )


def llm_settings_for(user: Any) -> LLMSettings | None:
    """Return the user's own LLM settings row, if any."""
    return LLMSettings.objects.filter(user=user).first()
