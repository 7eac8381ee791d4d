"""Derive the JSON Schema of a bash builtin from a jazzmine tool or a script tool."""

from __future__ import annotations

import re
from typing import Any

from jazzmine.core.tools.registry import RegisteredTool, ToolRegistry
from jazzmine.core.tools.types import ToolParameter

from .engine import ToolSpec

_SCALARS = {
    "str": "string", "string": "string",
    "int": "integer", "integer": "integer",
    "float": "number", "number": "number",
    "bool": "boolean", "boolean": "boolean",
    "list": "array", "array": "array", "tuple": "array", "set": "array",
    "dict": "object", "object": "object", "mapping": "object",
}  # fmt: skip
_GENERIC = re.compile(r"^(?:typing\.)?(\w+)\s*\[(.*)\]$")


def json_type(annotation: str) -> dict[str, Any]:
    """Map a jazzmine type string (`int`, `List[str]`, `Optional[dict]`...) to a JSON Schema."""
    text = annotation.strip()
    if "|" in text:  # `int | None`: the non-None member decides
        members = [m.strip() for m in text.split("|") if m.strip() not in ("None", "NoneType")]
        return json_type(members[0]) if len(members) == 1 else {}
    match = _GENERIC.match(text)
    if match:
        outer, inner = match.group(1).lower(), match.group(2)
        if outer == "optional":
            return json_type(inner)
        if outer in ("list", "sequence", "tuple", "set", "iterable"):
            items = json_type(inner.split(",")[0]) if inner.strip() else {}
            return {"type": "array", **({"items": items} if items else {})}
        if outer in ("dict", "mapping"):
            return {"type": "object"}
        if outer == "union":
            members = [m for m in inner.split(",") if m.strip() not in ("None", "NoneType")]
            return json_type(members[0]) if len(members) == 1 else {}
        if outer == "literal":
            return {}
    mapped = _SCALARS.get(text.lower())
    return {"type": mapped} if mapped else {}


def schema_from_parameters(parameters: list[ToolParameter]) -> dict[str, Any]:
    """Return the object schema of a parameter list: types, descriptions, enums, defaults."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter in parameters:
        prop = json_type(parameter.type)
        if parameter.description:
            prop["description"] = parameter.description
        if parameter.options:
            prop["enum"] = list(parameter.options)
        if parameter.default is not None:
            prop["default"] = parameter.default
        if parameter.examples:
            prop["examples"] = list(parameter.examples)
        properties[parameter.name] = prop
        if parameter.required:
            required.append(parameter.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def spec_from_registered(registered: RegisteredTool) -> ToolSpec:
    """Return the builtin of a registered jazzmine tool."""
    return ToolSpec(
        name=registered.name,
        description=registered.tool.description,
        schema=schema_from_parameters(registered.tool.parameters),
    )


def spec_from_script_tool(tool: Any) -> ToolSpec:
    """Return the builtin of a script tool, with its tool.json schema as it is."""
    return ToolSpec(name=tool.name, description=tool.description, schema=dict(tool.parameters))


def specs_for_sandbox(
    registry: ToolRegistry, sandbox_name: str, *, script_tools: list[Any] | None = None
) -> list[ToolSpec]:
    """Return the builtins of a sandbox; script tools keep their own tool.json schema."""
    by_name = {t.name: spec_from_script_tool(t) for t in script_tools or []}
    return [by_name.get(t.name) or spec_from_registered(t) for t in registry.tools(sandbox_name)]
