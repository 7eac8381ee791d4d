"""Reads of script tools: their lint, trials, publish state and the tools a script calls."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from jazzmine.scripttools import LintItem, ScriptTool, lint_tool

from ..catalog.models import Tool, ToolKind
from ..catalog.services import script_tool_from_row
from .models import TrialRun

# A bash word that starts a command: after start of line, a pipe, `;`, `&&`, `||`, `$(`, `(`,
# backticks, or the keywords that take a command.
_BASH_COMMAND = re.compile(
    r"(?:^|[|;&(`]|\$\(|\b(?:then|do|else|elif|if|while|until|!)\s)\s*([A-Za-z_][A-Za-z0-9_]*)",
    re.MULTILINE,
)


def script_tool_for(tool: Tool) -> ScriptTool | None:
    """Return the script tool a catalog row holds, or None."""
    return script_tool_from_row(tool)


def script_tool_lint(tool: Tool) -> list[LintItem]:
    """Return the spec's checklist for a script tool row, item by item."""
    script_tool = script_tool_from_row(tool)
    return lint_tool(script_tool) if script_tool is not None else []


def trials_for_tool(tool: Tool) -> QuerySet[TrialRun]:
    """Return a tool's trial runs, newest first."""
    return TrialRun.objects.filter(tool=tool).select_related("created_by").order_by("-created_at")


def latest_passed_trial(tool: Tool) -> TrialRun | None:
    """Return the newest passed trial of the tool's current code."""
    return trials_for_tool(tool).filter(checksum=tool.checksum, passed=True).first()


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
        return PublishState(tool.published, True, "a trial run of the current code passed")
    return PublishState(
        tool.published, False, "run a trial of the current code and make it pass first"
    )


def pretty_output(text: str) -> tuple[bool, str]:
    """Return stdout pretty-printed when it is one JSON value, else as it is."""
    try:
        return True, json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return False, text


def bash_commands(body: str) -> set[str]:
    """Return the words a bash script uses as commands (a light, static reading)."""
    return {m.group(1) for m in _BASH_COMMAND.finditer(_strip_comments(body))}


def _strip_comments(body: str) -> str:
    return "\n".join(re.sub(r"(^|\s)#.*$", r"\1", line) for line in body.splitlines())


def tools_called(*, body: str, tools: list[Tool], language: str = "python") -> list[dict[str, Any]]:
    """Return the tools a script calls, with `always_allow` and `secrets`, for the review policy.

    Python bodies are read with the AST (any load of a tool's name); bash bodies by the words
    in command position. Unpublished tools are not in a run's sandbox, so they never count.
    """
    rows = {t.name: t for t in tools if t.published}
    if language == "bash":
        names = sorted(bash_commands(body) & set(rows))
    else:
        import ast

        try:
            tree = ast.parse(body)
        except (SyntaxError, ValueError):
            names = sorted(n for n in rows if re.search(rf"\b{re.escape(n)}\b", body))
        else:
            names = sorted(
                {
                    n.id
                    for n in ast.walk(tree)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in rows
                }
            )
    return [
        {
            "name": name,
            "kind": rows[name].kind,
            "always_allow": rows[name].always_allow,
            "secrets": list(rows[name].secrets),
        }
        for name in names
    ]
