"""Bash orchestration: a sandbox's tools as builtins of a locked-down bashkit interpreter."""

from __future__ import annotations

from .engine import BashCall, BashLimits, BashResult, BashSession, ToolSpec, render
from .schema import (
    json_type,
    schema_from_parameters,
    spec_from_registered,
    spec_from_script_tool,
    specs_for_sandbox,
)


def system_prompt(specs: list[ToolSpec], *, limits: BashLimits | None = None) -> str:
    """Return the system prompt bashkit writes for a tool set (no tool code runs)."""
    return BashSession(specs, {}, limits=limits).system_prompt()


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
