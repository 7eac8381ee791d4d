"""Write a sandbox back out as a Python module that `jazzmine.core.tools` can import."""

from __future__ import annotations

from typing import Any

from jazzmine.core.tools import ToolParameter

from .models import Sandbox, Tool, ToolKind
from .services.rules import SANDBOX_CONFIG_FIELDS


def _parameter(data: dict[str, Any]) -> str:
    defaults = ToolParameter(name="x", type="str").to_dict()
    args = [repr(data["name"]), repr(data["type"])]
    for key in (
        "description",
        "default",
        "required",
        "options",
        "examples",
        "source",
        "display_name",
    ):
        if data.get(key) != defaults[key]:
            args.append(f"{key}={data[key]!r}")
    return f"ToolParameter({', '.join(args)})"


def _decorator(tool: Tool, sandbox_name: str) -> list[str]:
    lines = ["@registry.tool(", f"    description={tool.description!r},"]
    if tool.parameters:
        lines.append("    parameters=[")
        lines.extend(f"        {_parameter(p)}," for p in tool.parameters)
        lines.append("    ],")
    if tool.dependencies:
        lines.append(f"    dependencies={list(tool.dependencies)!r},")
    if tool.secrets:
        lines.append(f"    secrets={list(tool.secrets)!r},")
    lines.append(f"    sandbox={sandbox_name!r},")
    if tool.name != tool.function_name:
        lines.append(f"    name={tool.name!r},")
    lines.append(")")
    return lines


def render_module(sandbox: Sandbox, tools: list[Tool]) -> str:
    """Return the module text: a registry, the sandbox profile and every Python tool."""
    config = sandbox.to_config()
    config_args = [f"name={sandbox.name!r}"]
    config_args.extend(f"{f}={getattr(config, f)!r}" for f in SANDBOX_CONFIG_FIELDS)
    out = [
        f'"""Tools of the sandbox {sandbox.name!r} (team {sandbox.team.slug!r}), '
        'exported from Jazzmine Studio."""',
        "",
        # Annotations stay text: tool bodies are teleported, their hints need not resolve here.
        "from __future__ import annotations",
        "",
        "from jazzmine.core.tools import SandboxConfig, ToolParameter, ToolRegistry, ToolResponse",
        "",
        "registry = ToolRegistry()",
        "registry.register_sandbox(",
        "    SandboxConfig(",
        *(f"        {arg}," for arg in config_args),
        "    )",
        ")",
    ]
    for tool in tools:
        if tool.kind != ToolKind.PYTHON:
            continue
        out.extend(["", ""])
        out.extend(_decorator(tool, sandbox.name))
        out.append(tool.source.rstrip("\n"))
    out.append("")
    # ToolResponse is imported for the tools' return hints; keep linters from dropping it.
    out.append("__all__ = ['ToolResponse', 'registry']")
    out.append("")
    return "\n".join(out)
