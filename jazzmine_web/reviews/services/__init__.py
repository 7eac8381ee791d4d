"""Writes for reviews, one module per job; each one audited; the public names are re-exported here.

`submitting` checks an agent's script and queues or runs it by policy, `deciding` approves a
pending one (reading it again against the tools of now) or rejects it, `edits` approves a
reviewer's edit on its own reading, `expiry` expires what nobody decided and notes run ends,
`withdrawing` lets an agent take back a pending one, `unattended` says what a script nobody
read may call; `policy` sets how a sandbox is reviewed, `audit` writes the trail (and hears
catalog changes and every run), `errors` is what they raise.

Importing the package imports every module, so each signal receiver (`audit`'s and
`submitting`'s) is connected once, when the app's `ready()` imports it.
"""

from __future__ import annotations

from .audit import agent_label
from .deciding import (
    submission_approve,
    submission_decide_check,
    submission_refresh,
    submission_reject,
)
from .edits import EditReading, EditToolsUnseen, submission_approve_edit, submission_edit_read
from .errors import (
    EditRefused,
    ReviewConflict,
    ReviewError,
    ReviewForbidden,
    ScriptUnchecked,
    SubmissionInvalid,
    ToolsChanged,
)
from .expiry import (
    submission_note_run_finished,
    submission_run_cancel,
    submissions_expire_overdue,
    submissions_note_finished_runs,
)
from .policy import review_settings_set
from .submitting import MAX_BODY_CHARS, MAX_PROMPT_CHARS, MAX_TASK_CHARS, submission_create
from .unattended import NeedsPerson, unattended_allowed_tools
from .withdrawing import submission_withdraw

__all__ = [
    "MAX_BODY_CHARS",
    "MAX_PROMPT_CHARS",
    "MAX_TASK_CHARS",
    "EditReading",
    "EditRefused",
    "EditToolsUnseen",
    "NeedsPerson",
    "ReviewConflict",
    "ReviewError",
    "ReviewForbidden",
    "ScriptUnchecked",
    "SubmissionInvalid",
    "ToolsChanged",
    "agent_label",
    "review_settings_set",
    "submission_approve",
    "submission_approve_edit",
    "submission_create",
    "submission_decide_check",
    "submission_edit_read",
    "submission_note_run_finished",
    "submission_refresh",
    "submission_reject",
    "submission_run_cancel",
    "submission_withdraw",
    "submissions_expire_overdue",
    "submissions_note_finished_runs",
    "unattended_allowed_tools",
]
