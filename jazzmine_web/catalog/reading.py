"""Reading tools' sources without Django, so that big ones are read in the checker process.

Registering a tool parses its source (`ast.parse` holds the GIL for its whole run: about a
second a megabyte, with every socket of a web process waiting), and so does reading which
arguments its function takes. A tool's fields are checked on every save, and every registry
of its sandbox registers it again (its prompt, a run's check, a worker's image): where the
sources are big, that is done where a big script is read (`studio.checker.checked`), with
plain arguments that pickle.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jazzmine.core.tools import RegisteredTool, SandboxConfig, ToolParameter, ToolRegistry
from jazzmine.core.tools.lint import LintItem
from jazzmine.scripttools import ScriptTool, register_script_tool

from ..studio import checker

checker.preload(__name__)


@dataclass(frozen=True)
class SourceTool:
    """A `@tool` function's fields, as a catalog row or a form holds them."""

    source: str
    name: str | None
    description: str
    parameters: list[ToolParameter]
    dependencies: list[str]
    secrets: list[str]

    def register(self, registry: ToolRegistry, *, sandbox_name: str) -> RegisteredTool:
        return registry.register_source(
            self.source,
            sandbox=sandbox_name,
            description=self.description,
            parameters=self.parameters,
            dependencies=self.dependencies,
            secrets=self.secrets,
            name=self.name,
        )


def tool_source_read(
    tool: SourceTool, *, sandbox_name: str
) -> tuple[RegisteredTool, set[str] | None]:
    """Register a tool in a scratch registry; return it with the arguments its function takes.

    The arguments are None when the function takes `**kwargs`. Raises what the registry
    raises for a source it refuses (TypeError, ValueError; RecursionError or MemoryError for
    valid code too extreme for CPython's parser).
    """
    scratch = ToolRegistry()
    if sandbox_name != "default":
        scratch.register_sandbox(SandboxConfig(name=sandbox_name))
    registered = tool.register(scratch, sandbox_name=sandbox_name)
    return registered, _accepted_arguments(registered.source)


def registry_read(config: SandboxConfig, tools: list[SourceTool | ScriptTool]) -> ToolRegistry:
    """Return the frozen registry of one sandbox and its tools, registered in this order."""
    registry = ToolRegistry()
    registry.register_sandbox(config)
    for tool in tools:
        if isinstance(tool, ScriptTool):
            register_script_tool(registry, tool, sandbox=config.name)
        else:
            tool.register(registry, sandbox_name=config.name)
    return registry.freeze()


def lint_read(chars: int, lint: Callable[..., list[LintItem]], *args: Any) -> list[LintItem]:
    """Return a tool's lint (`lint(*args)`), read in the checker process when its code is big.

    A tool's page lints its code on every view. A checker that fails answers one item that
    did not pass, saying why, rather than no page.
    """
    try:
        return checker.checked(chars, lint, *args)
    except checker.CheckerUnavailable as exc:
        return [LintItem("checked", "The code could be read", False, exc.why)]


def _accepted_arguments(source: str) -> set[str] | None:
    node = next(
        n for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    )
    if node.args.kwarg is not None:
        return None
    args = node.args
    return {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
