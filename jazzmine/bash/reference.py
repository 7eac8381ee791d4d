"""The bash prompt's reference of its tool commands: what each does and what each flag takes.

bashkit's own prompt lists each command with its flags' types only (`get_user [--user_id
<string>]`): no description, every flag drawn as optional, no allowed values. A model that
writes Python reads all of that in the tools' XML; one that writes bash guessed, and a
status it made up failed the call (`input.status is not an allowed value`). The reference
says it from the same JSON schemas bashkit checks calls against.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the engine puts the reference in its prompt
    from .engine import ToolSpec

HEADING = (
    "Tool commands: each prints its result on stdout (text as it is, anything else as one "
    "JSON line, for jq); a failed call prints why on stderr and returns 1."
)
# What the reference quotes is cut here, so the prompt stays the size of the tools' own: a
# tool's description, a flag's description or value, and how many allowed values it lists.
DESCRIPTION_CHARS = 2000
VALUE_CHARS = 200
LISTED_VALUES = 50


def tool_reference(specs: Iterable[ToolSpec]) -> str:
    """Return the reference of the tool commands `specs`, one block each (empty: none)."""
    blocks = [_block(spec) for spec in specs]
    return "\n\n".join([HEADING, *blocks]) if blocks else ""


def _block(spec: ToolSpec) -> str:
    description = _one_line(spec.description, DESCRIPTION_CHARS)
    lines = [f"{spec.name}: {description}" if description else spec.name]
    properties = spec.schema.get("properties") or {}
    required = set(spec.schema.get("required") or ())
    if not isinstance(properties, dict) or not properties:
        lines.append("  (no flags)")
        return "\n".join(lines)
    for name, schema in properties.items():
        schema = schema if isinstance(schema, dict) else {}
        lines.append(
            f"  --{name} <{_kind(schema)}>  " + "; ".join(_facts(schema, name in required))
        )
    return "\n".join(lines)


def _facts(schema: dict[str, Any], required: bool) -> list[str]:
    facts = ["required" if required else "optional"]
    if isinstance(schema.get("enum"), list):
        values = schema["enum"]
        listed = ", ".join(_value(v) for v in values[:LISTED_VALUES])
        more = len(values) - LISTED_VALUES
        facts.append(
            f"one of: {listed}" + (f" and {more} more (help <tool> --json)" if more > 0 else "")
        )
    if "default" in schema:
        facts.append(f"default {_value(schema['default'])}")
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        facts.append("e.g. " + ", ".join(_value(v) for v in schema["examples"][:3]))
    if schema.get("description"):
        facts.append(_one_line(schema["description"], DESCRIPTION_CHARS))
    return facts


def _kind(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    return str(kind) if isinstance(kind, str) else "value"


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return _one_line(text)


def _one_line(text: Any, limit: int = VALUE_CHARS) -> str:
    """Return text on one line (a description's own lines would read as other entries)."""
    flat = re.sub(r"\s+", " ", str(text)).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
