"""Checks of parameter defaults: typed, present when optional, equal to the script's own."""

from __future__ import annotations

import json
from typing import Any

from jazzmine.core.tools.lint import json_same

from .registry import Outcome, Registry
from .subject import Subject

CHECKS = Registry()

_TYPE_TESTS = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def _matches_type(value: Any, type_: Any) -> bool:
    """Tell whether a value fits a JSON type; an unknown type accepts anything."""
    test = _TYPE_TESTS.get(type_) if isinstance(type_, str) else None
    return True if test is None else test(value)


@CHECKS.register("defaults_typed", "defaults have the declared type (and are enum values)")
def defaults_typed(subject: Subject) -> Outcome:
    """Pass when every default has its property's type and is one of its enum values."""
    problems = []
    for name, prop in subject.props.items():
        if "default" not in prop:
            continue
        default = prop["default"]
        if not _matches_type(default, prop.get("type")):
            problems.append(f"{name}: default {json.dumps(default)} is not {prop.get('type')}")
        elif isinstance(prop.get("enum"), list) and default not in prop["enum"]:
            problems.append(f"{name}: default {json.dumps(default)} is not one of its enum values")
    return (not problems, "; ".join(problems) or "ok")


@CHECKS.register("optional_defaults", "every optional parameter has a default")
def optional_defaults(subject: Subject) -> Outcome:
    """Pass when every parameter that is not required has a default."""
    missing = [
        n for n, p in subject.props.items() if n not in subject.required and "default" not in p
    ]
    if missing:
        return False, (
            f"optional without a default: {', '.join(missing)} (the LLM cannot tell what "
            "leaving it out means)"
        )
    return True, "ok"


@CHECKS.register(
    "defaults_match_script", "tool.json defaults equal the script's own defaults", needs_script=True
)
def defaults_match_script(subject: Subject) -> Outcome:
    """Pass when each default the script visibly uses is the one tool.json declares."""
    problems = []
    for name, prop in subject.props.items():
        found = subject.scan.defaults.get(name)
        if found is None or found[0] == "unknown":
            continue  # not read with a default the analysis can see
        problem = _default_mismatch(name, prop, *found, required=name in subject.required)
        if problem:
            problems.append(problem)
    return (not problems, "; ".join(problems) or "ok")


def _default_mismatch(
    name: str, prop: dict[str, Any], kind: str, value: Any, *, required: bool
) -> str | None:
    """Say how tool.json's default for `name` differs from the script's, or return None."""
    if "default" not in prop:
        # A required value always comes: the script's fallback (`args.get("text", "")`) is
        # defensive code, not a default an LLM could rely on by leaving the value out.
        if kind == "literal" and not required:
            return f"{name}: the script defaults to {json.dumps(value)} but tool.json declares no default"
        return None
    if kind == "none":
        return (
            f"{name}: tool.json says default {json.dumps(prop['default'])} but the script "
            "reads it without one"
        )
    if not json_same(value, prop["default"]):
        return (
            f"{name}: tool.json default {json.dumps(prop['default'])} != script default "
            f"{json.dumps(value)}"
        )
    return None
