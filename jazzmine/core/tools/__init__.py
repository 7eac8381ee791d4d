"""The jazzmine tool system: tool types, the registry and the script generator."""

from __future__ import annotations

from .generator import (
    ScriptGenerator,
    body_numbered,
    body_offset,
    failed_attempt,
    plain_newlines,
    strip_fences,
)
from .registry import RegisteredTool, SandboxConfig, ToolRegistry, registry, tool
from .types import Tool, ToolParameter, ToolResponse
from .validator import validate_script

__all__ = [
    "RegisteredTool",
    "SandboxConfig",
    "ScriptGenerator",
    "Tool",
    "ToolParameter",
    "ToolRegistry",
    "ToolResponse",
    "body_numbered",
    "body_offset",
    "failed_attempt",
    "plain_newlines",
    "registry",
    "strip_fences",
    "tool",
    "validate_script",
]
