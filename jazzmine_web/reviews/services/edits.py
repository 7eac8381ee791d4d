"""A reviewer's edit: read as the gate reads a submission, and approved only on that reading."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from jazzmine.core.tools.generator import plain_newlines, script_body

from ...runs.services import run_tools_called, script_check
from ...studio.diffs import unified_diff
from ..analysis import same_body
from ..models import AuditAction, AuditEntry, Submission
from .deciding import (
    _check_not_own,
    edit_body_checked,
    submission_approve,
    submission_decide_check,
    submission_refresh,
)
from .errors import ToolsChanged, refused_unless_checked


@dataclass(frozen=True)
class EditReading:
    """An edited script as the gate reads it: violations, the tools it calls, its changes."""

    body: str
    violations: list[str]
    tools_called: list[dict[str, Any]]
    tools_added: list[str]  # tools the edit calls (or may call) that the agent's script did not
    diff: str  # unified diff from the agent's script to the edit; empty when unchanged

    @property
    def edited(self) -> bool:
        """Tell whether the edit differs from the agent's script."""
        return bool(self.diff)


@refused_unless_checked
def submission_edit_read(*, submission: Submission, body: str) -> EditReading:
    """Read a reviewer's edit with the validator and the gate, and diff it against the agent's."""
    body = plain_newlines(edit_body_checked(body))
    shown = script_body(submission.script, submission.language)
    if same_body(body, shown):
        # The agent's script: the reading stored at submission is what the policy decided on.
        return EditReading(body, list(submission.violations), submission.tools_called, [], "")
    script, violations = script_check(
        sandbox=submission.sandbox, body=body, language=submission.language
    )
    tools = run_tools_called(
        sandbox=submission.sandbox, body=body, language=submission.language, script=script
    )
    before = {t["name"] for t in submission.tools_called}
    return EditReading(
        body=body,
        violations=violations,
        tools_called=tools,
        tools_added=[t["name"] for t in tools if t["name"] not in before],
        diff=unified_diff(shown, body, old_name="agent's script", new_name="reviewer's edit"),
    )


class EditToolsUnseen(ToolsChanged):
    """The edit calls tools the reviewer was not shown, or not asked about; nothing approved.

    What `_reading_check` found, said of the edit, with the edit's reading of now: the page
    shows it in the answer, so the next approval is decided on what it lists and asks.
    """

    code_name = "edit_tools_unseen"

    def __init__(self, reading: EditReading, changed: ToolsChanged) -> None:
        self.reading = reading
        super().__init__(
            appeared=changed.appeared,
            no_longer_allowed=changed.no_longer_allowed,
            unasked=changed.unasked,
            recoded=changed.recoded,
        )

    @property
    def unseen(self) -> list[str]:
        """Return the tools the edit calls that the page did not list."""
        return self.appeared

    def explained(self) -> str:
        """Say it of the edit: the reviewer typed the call, the sandbox may have changed too."""
        found = []
        if self.appeared:
            found.append(
                f"The edited script calls {', '.join(self.appeared)}, which the list of tools "
                "you saw did not show"
            )
        found.extend(self._not_asked())
        return "; ".join(found) + ". Look again at the tools it calls, as read now, then approve."


def submission_approve_edit(
    *,
    submission: Submission,
    user: AbstractBaseUser,
    body: str,
    tools_seen: list[str],
    tools_asked: list[str] | None = None,
    note: str = "",
    tools_digests: Mapping[str, str] | None = None,
) -> Submission:
    """Approve a reviewer's edit, decided on the edit's own reading; audit its diff and tools.

    `tools_seen` is what the page listed for the text it sent, and `tools_asked` the ones it
    showed as needing review (None: its form sent no list; `_reading_check` says what then);
    `tools_digests` the code of each as the page read it.
    """
    submission = submission_refresh(submission=submission)
    submission_decide_check(submission=submission, user=user)
    _check_not_own(submission=submission, user=user)
    reading = submission_edit_read(submission=submission, body=body)
    if not reading.edited:
        return submission_approve(
            submission=submission,
            user=user,
            note=note,
            tools_seen=tools_seen,
            tools_asked=tools_asked,
            tools_digests=tools_digests,
        )
    try:
        with transaction.atomic():
            # Held to exactly what its page showed, by the same check as the agent's script:
            # a tool call typed after the page last read the text, or a tool whose
            # always-allowed mark went since, is refused (`_reading_check`).
            approved = submission_approve(
                submission=submission,
                user=user,
                body=body,
                note=note,
                tools_seen=tools_seen,
                tools_asked=tools_asked,
                tools_digests=tools_digests,
            )
            # The approval's own entry names the tools approved (`submission_approve`).
            extra = {
                "diff": reading.diff,
                "original_tools": [t["name"] for t in submission.tools_called],
                "tools_called": reading.tools_called,
                "tools_added": reading.tools_added,
            }
            for entry in AuditEntry.objects.filter(submission=approved, action=AuditAction.EDITED):
                entry.data = {**entry.data, **extra}
                entry.save(update_fields=["data"])
    except ToolsChanged as exc:
        # Read again: the page's answer shows what the next approval would be decided on.
        raise EditToolsUnseen(submission_edit_read(submission=submission, body=body), exc) from exc
    return approved
