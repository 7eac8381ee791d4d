"""The interface types of a tool: parameters, the tool itself, and what a tool returns.

Stdlib-only on purpose: the sandbox builder copies this file into every image so that tools
running in a container build the very same `ToolResponse` the host parses.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass, field, fields
from typing import Any, Literal
from xml.sax.saxutils import escape, quoteattr

Source = Literal["context", "history", "all"]
_SOURCES = ("context", "history", "all")


# Everything but printable ASCII, tab, newline and "\r": the only characters worth a look
# (a text is nearly always ASCII). Shared with the validator's rule (`validator.legible`).
UNSEEN_CANDIDATES = re.compile(r"[^\t\n\r\x20-\x7e]")
# Control, format, surrogate, private-use and unassigned characters, and line separators,
# each with how a message names it. XML 1.0 allows the controls and surrogates nowhere (a
# tool's output holding one made the prompt no XML at all), and no page draws the rest as
# they are (tag characters spelt instructions no one saw). The catalog refuses them in a
# tool's text; whatever still carries one (a tool's output, a row of before) is written as
# its escape in the prompt.
UNSEEN_CATEGORIES = {
    "Cc": "a control character",
    "Cf": "a format character",
    "Cs": "a surrogate",
    "Co": "a private-use character",
    "Cn": "an unassigned character",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}


def _escape_unseen(match: re.Match[str]) -> str:
    char = match.group()
    if unicodedata.category(char) not in UNSEEN_CATEGORIES:
        return char
    point = ord(char)
    return f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"


def _xml_chars(text: str) -> str:
    """Return text with each character XML cannot hold, or no page draws, as its escape."""
    return UNSEEN_CANDIDATES.sub(_escape_unseen, text)


def _text(value: Any) -> str:
    """Render a value as XML character data, escaped so that `<`, `&` never break the tree."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return escape(_xml_chars(text))


def _attr(value: Any) -> str:
    """Render a value as a quoted XML attribute (quotes and `<` included)."""
    return quoteattr(_xml_chars(value if isinstance(value, str) else str(value)))


def _ensure_json_safe(value: Any, where: str) -> None:
    """Refuse values that would not survive the trip from sandbox to host as JSON."""
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} is {value!r}, which JSON cannot represent")
        return
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _ensure_json_safe(item, f"{where}[{index}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where} has a key {key!r} that is not a string")
            _ensure_json_safe(item, f"{where}[{key!r}]")
        return
    raise ValueError(
        f"{where} holds a {type(value).__name__}, which is not JSON-safe; "
        "use dicts, lists, strings, numbers, booleans or None"
    )


@dataclass
class ToolParameter:
    """One input argument of a tool, with the hints that steer an LLM's choice of value."""

    name: str
    type: str
    description: str | None = None
    default: Any | None = None
    required: bool = False
    options: list[Any] | None = None
    examples: list[Any] | None = None
    source: Source | None = None
    display_name: str | None = None

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError("ToolParameter.name must be a non-empty string")
        # Each field is what its prompt and pages read it as: a number as `type` was saved and
        # then broke the tool's page (a 500), and `options: "pending"` became seven options.
        if not isinstance(self.type, str) or not self.type.strip():
            raise ValueError(
                f"ToolParameter {self.name!r}: type must be a non-empty string such as "
                f"'str' or 'int', not {self.type!r}"
            )
        for key in ("description", "display_name"):
            value = getattr(self, key)
            if value is not None and not isinstance(value, str):
                raise ValueError(
                    f"ToolParameter {self.name!r}: {key} must be a string, not {value!r}"
                )
        for key in ("options", "examples"):
            value = getattr(self, key)
            if value is not None and not isinstance(value, (list, tuple)):
                raise ValueError(
                    f"ToolParameter {self.name!r}: {key} must be a list, not {value!r}"
                )
        if not isinstance(self.required, bool):
            # "false" is true to Python: the prompt said required="false" and bash's schema
            # made the parameter required.
            raise ValueError(
                f"ToolParameter {self.name!r}: required must be true or false, "
                f"not {self.required!r}"
            )
        if self.source is not None and self.source not in _SOURCES:
            raise ValueError(
                f"ToolParameter {self.name!r}: source must be one of {', '.join(_SOURCES)}, "
                f"not {self.source!r}"
            )
        # Every field as it is stored (`to_dict`), not only the default: a JSON column refuses
        # NaN and the infinities that Python's json reads (and writes), so a parameter holding
        # one in its examples, options or description failed at the save, a 500.
        for key, value in self.to_dict().items():
            _ensure_json_safe(value, f"ToolParameter {self.name!r} {key}")

    def build_prompt(self) -> str:
        """Return the `<parameter>` XML block the LLM reads."""
        lines = [
            f"<parameter name={_attr(self.name)} type={_attr(self.type)} "
            f"required={_attr(self.required)}>"
        ]
        if self.description:
            lines.append(f"  <description>{_text(self.description)}</description>")
        if self.default is not None:
            lines.append(f"  <default>{_text(self.default)}</default>")
        if self.options:
            lines.append("  <options>")
            lines.extend(f"    <option>{_text(o)}</option>" for o in self.options)
            lines.append("  </options>")
        if self.source:
            lines.append(f"  <source>{_text(self.source)}</source>")
        if self.display_name:
            lines.append(f"  <display_name>{_text(self.display_name)}</display_name>")
        if self.examples:
            lines.append("  <examples>")
            lines.extend(f"    <example>{_text(e)}</example>" for e in self.examples)
            lines.append("  </examples>")
        lines.append("</parameter>")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict of all nine attributes."""
        return {
            "name": self.name,
            "type": self.type,
            "description": self.description,
            "default": self.default,
            "required": self.required,
            "options": list(self.options) if self.options is not None else None,
            "examples": list(self.examples) if self.examples is not None else None,
            "source": self.source,
            "display_name": self.display_name,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolParameter:
        """Build a parameter from `to_dict()` output (unknown keys are refused, by name).

        The dicts come from people too (a form's JSON, a tool.json): Python's own words for a
        wrong keyword (`__init__() got an unexpected keyword argument`) are not theirs.
        """
        if not isinstance(data, dict):
            raise ValueError(
                f"each parameter is a JSON object with a name and a type, not {data!r}"
            )
        known = [f.name for f in fields(cls)]
        unknown = sorted(str(key) for key in data if key not in known)
        named = (
            f"parameter {data['name']!r}" if isinstance(data.get("name"), str) else "a parameter"
        )
        if unknown:
            raise ValueError(
                f"{named} has unknown key(s) {', '.join(map(repr, unknown))}; "
                f"a parameter's keys are {', '.join(known)}"
            )
        missing = [key for key in ("name", "type") if key not in data]
        if missing:
            raise ValueError(f"{named} needs a {' and a '.join(missing)}")
        return cls(**data)


@dataclass
class Tool:
    """A complete skill: a name, what it does, and its parameters."""

    name: str
    description: str
    parameters: list[ToolParameter] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.name or not self.name.isidentifier():
            raise ValueError(f"Tool name {self.name!r} must be a Python identifier")
        if not self.description or not self.description.strip():
            raise ValueError(f"Tool {self.name!r} needs a description: the LLM reads it")
        seen: set[str] = set()
        for parameter in self.parameters:
            if parameter.name in seen:
                raise ValueError(f"Tool {self.name!r} declares parameter {parameter.name!r} twice")
            seen.add(parameter.name)

    def build_prompt(self) -> str:
        """Return the `<tool>` XML block the LLM reads."""
        lines = [
            f"<tool name={_attr(self.name)}>",
            f"<description>{_text(self.description)}</description>",
        ]
        if self.parameters:
            lines.append("<parameters>")
            lines.extend(p.build_prompt() for p in self.parameters)
            lines.append("</parameters>")
        else:
            lines.append("<parameters/>")
        lines.append("</tool>")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict of the tool and its parameters."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": [p.to_dict() for p in self.parameters],
        }


@dataclass
class ToolResponse:
    """What every tool returns: a status, a message (mandatory on failure) and JSON-safe data."""

    success: bool
    message: str | None = None
    data: Any | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.success, bool):
            raise ValueError("ToolResponse.success must be True or False")
        if not self.success and not (self.message and str(self.message).strip()):
            raise ValueError("ToolResponse with success=False needs a message saying what failed")
        _ensure_json_safe(self.data, "ToolResponse.data")

    def build_prompt(self) -> str:
        """Return the `<tool_response>` XML block the agent reads back."""
        lines = [f"<tool_response success={_attr(self.success)}>"]
        if self.message:
            lines.append(f"<message>{_text(self.message)}</message>")
        if self.data is not None:
            lines.append(f"<data>{_text(self.data)}</data>")
        lines.append("</tool_response>")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict."""
        return {"success": self.success, "message": self.message, "data": self.data}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolResponse:
        """Build a response from `to_dict()` output."""
        return cls(success=data["success"], message=data.get("message"), data=data.get("data"))
