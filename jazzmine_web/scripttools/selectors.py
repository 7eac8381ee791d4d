"""Reads of script tools: their lint, trials and publish state."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db.models import QuerySet

from jazzmine.jsontext import json_read, json_shown
from jazzmine.sandbox.wheels import wheels_digest
from jazzmine.scripttools import LintItem, ScriptTool, TrialStatus, lint_tool

from ..catalog.models import Sandbox, Tool, ToolKind
from ..catalog.reading import lint_read
from ..catalog.services.registry import script_tool_from_row
from ..catalog.services.secrets import trial_wheels_problem
from .models import TrialRun, TrialState


def script_tool_for(tool: Tool) -> ScriptTool | None:
    """Return the script tool a catalog row holds, or None."""
    return script_tool_from_row(tool)


def exportable_script_tools(sandbox: Sandbox) -> list[ScriptTool]:
    """Return the sandbox's script tools that an export would hold, by name."""
    rows = sandbox.tools.filter(kind=ToolKind.SCRIPT).order_by("name")
    return [t for t in map(script_tool_from_row, rows) if t is not None]


def script_tool_lint(tool: Tool) -> list[LintItem]:
    """Return the spec's checklist for a script tool row, item by item."""
    script_tool = script_tool_from_row(tool)
    if script_tool is None:
        return []
    return lint_read(len(script_tool.source), lint_tool, script_tool)


def trials_for_tool(tool: Tool) -> QuerySet[TrialRun]:
    """Return a tool's trial runs, newest first."""
    return TrialRun.objects.filter(tool=tool).select_related("created_by").order_by("-created_at")


def latest_passed_trial(tool: Tool) -> TrialRun | None:
    """Return the newest passed trial of the tool's current code (by its whole digest)."""
    digest = tool.code_digest
    if not digest:
        return None  # code with no digest: no trial vouches for it
    return trials_for_tool(tool).filter(code_digest=digest, passed=True).first()


@dataclass(frozen=True)
class TrialWheels:
    """The wheel files of the image the newest trial of a tool's current code ran in."""

    trial_id: uuid.UUID
    files: list[str]  # "name sha256", sorted: one line each on the page
    digest: str  # `wheels_digest(files)`: what the Accept form carries
    problem: str  # why they may not run beside the tool's secrets ("" when accepted)


def trial_wheels_shown(tool: Tool) -> TrialWheels | None:
    """Return the wheel files the tool page offers to accept for trials of the current code.

    Those of the newest finished trial of that code (by its whole digest). None when there is
    none, or its image held no wheel (the base image) or did not say which: nothing to read,
    so nothing to accept.
    """
    digest = tool.code_digest
    if not digest:
        return None
    trial = trials_for_tool(tool).filter(code_digest=digest, state=TrialState.DONE).first()
    files = trial.image_wheels if trial is not None else None
    if trial is None or not isinstance(files, list) or not files:
        return None
    files = sorted(str(line) for line in files)
    return TrialWheels(
        trial_id=trial.pk,
        files=files,
        digest=wheels_digest(files),
        problem=trial_wheels_problem(tool=tool, code_digest=digest, image=files),
    )


@dataclass(frozen=True)
class PublishState:
    """Whether a tool is offered to LLMs and whether it may be."""

    published: bool
    can_publish: bool
    reason: str


def publish_state(tool: Tool) -> PublishState:
    """Return the publish state of a tool and why it can or cannot be published."""
    if tool.kind != ToolKind.SCRIPT:
        return PublishState(tool.published, True, "")
    if latest_passed_trial(tool) is not None:
        return PublishState(
            tool.published, True, "a trial of the current code passed, so it can be published"
        )
    return PublishState(
        tool.published, False, "run a trial of the current code and make it pass first"
    )


# The spec's result table in words: the codes are for machines and tests.
TRIAL_STATUS_LABELS: dict[str, str] = {
    TrialStatus.VALID_JSON: "passed: valid JSON",
    TrialStatus.NON_JSON: "output is not JSON",
    TrialStatus.EMPTY: "no output",
    TrialStatus.SCRIPT_ERROR: "script error",
    TrialStatus.TIMEOUT: "timed out",
    TrialStatus.MISSING_RUNTIME: "runtime missing",
    TrialStatus.MISSING_MODULE: "module missing",
    TrialStatus.SANDBOX_ERROR: "sandbox could not run it",
}


def trial_status_label(status: str) -> str:
    """Return a trial status as people read it; an unknown code reads as itself, spaced."""
    return TRIAL_STATUS_LABELS.get(status, status.replace("_", " "))


def pretty_output(text: str) -> tuple[bool, str]:
    """Return stdout pretty-printed when it is one JSON value, else as it is."""
    try:
        return True, json_shown(json_read(text), indent=2)
    except (ValueError, RecursionError):  # not JSON, or more than Python reads or writes back
        return False, text
