"""Bash orchestration: a sandbox's tools as builtins of a locked-down bashkit interpreter."""

from __future__ import annotations

from .engine import BashCall, BashLimits, BashResult, BashSession, ToolSpec, render
from .reference import tool_reference
from .schema import (
    json_type,
    schema_from_parameters,
    spec_from_registered,
    spec_from_script_tool,
    specs_for_sandbox,
)


def system_prompt(specs: list[ToolSpec], *, limits: BashLimits | None = None) -> str:
    """Return the system prompt of a tool set: bashkit's, then the reference of the commands
    it offers (descriptions, required flags, allowed values). No tool code runs."""
    session = BashSession(specs, {}, limits=limits)
    reference = tool_reference(spec for spec in specs if spec.name in session.offered)
    return "\n\n".join(part for part in (session.system_prompt(), reference) if part)


__all__ = [
    "BashCall",
    "BashLimits",
    "BashResult",
    "BashSession",
    "ToolSpec",
    "json_type",
    "render",
    "schema_from_parameters",
    "spec_from_registered",
    "spec_from_script_tool",
    "specs_for_sandbox",
    "system_prompt",
]
