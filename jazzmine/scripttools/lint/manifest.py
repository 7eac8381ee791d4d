"""Checks of tool.json itself: it loads, its name and its parameter schema."""

from __future__ import annotations

import re

from ..model import JSON_TYPES
from .registry import Outcome, Registry
from .subject import Subject

CHECKS = Registry()

# Verbs an LLM recognises as actions; names that start elsewhere read as nouns (rsi_calc).
VERBS = frozenset(
    """add aggregate analyze analyse append apply approve archive assign audit book build
    calculate cancel check classify clean clear close compare compile compress compute
    convert copy count create crop deduplicate decode delete deploy describe detect diff
    disable download draft edit enable encode enrich estimate evaluate explain export
    extract fetch filter find format forecast generate geocode get group hash import
    index inspect list load lookup make map match measure merge move normalize normalise
    notify open parse pay ping plan plot post predict preview publish query rank read
    recommend reconcile refresh refund register reject remove rename render reorder
    replace report request reserve reset resize resolve restore retrieve review rotate
    route run sample save scan schedule score scrape search send set share simulate sort
    split start stop store submit subscribe suggest summarize summarise sync tag test
    track transcribe transform translate trigger unsubscribe update upload validate
    verify watch write""".split()  # noqa: SIM905
)
VAGUE_VERBS = frozenset({"process", "handle", "do", "manage", "perform", "execute", "misc"})
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


@CHECKS.register(
    "valid_json",
    "tool.json is valid JSON with a name, a description and parameters",
    needs_manifest=False,
)
def valid_json(subject: Subject) -> Outcome:
    """Pass when tool.json loaded whole."""
    return subject.json_problem is None, subject.json_problem or "ok"


@CHECKS.register("name_format", "name is snake_case, verb first, without the script_ prefix")
def name_format(subject: Subject) -> Outcome:
    """Pass when the name is a snake_case verb_noun matching its folder."""
    name, folder = subject.name, subject.folder
    if not isinstance(name, str) or not name:
        return False, "name is missing"
    if not _SNAKE.match(name):
        return False, f"{name!r} is not snake_case (lowercase words joined by '_')"
    if name.startswith("script_"):
        return False, f"{name!r}: drop the script_ prefix, the runtime adds it"
    words = name.split("_")
    if words[0] in VAGUE_VERBS:
        return False, f"{name!r} starts with the vague verb {words[0]!r}; say what it does"
    if words[0] not in VERBS:
        return False, f"{name!r} does not start with a verb (e.g. calculate_rsi, not rsi_calc)"
    if len(words) < 2:
        return False, f"{name!r} names no object: use verb_noun, e.g. fetch_weather"
    if folder is not None and folder != name:
        return False, f"name {name!r} differs from its folder {folder!r}"
    return True, "ok"


@CHECKS.register("schema_object", 'parameters is a JSON Schema with type "object" and properties')
def schema_object(subject: Subject) -> Outcome:
    """Pass when parameters is an object schema with a properties object."""
    schema = subject.parameters
    if not isinstance(schema, dict):
        return False, "parameters must be a JSON object"
    if schema.get("type") != "object":
        return False, f'parameters.type must be "object", not {schema.get("type")!r}'
    if not isinstance(schema.get("properties", {}), dict):
        return False, "parameters.properties must be an object (one entry per parameter)"
    return True, "ok"


@CHECKS.register("required_declared", "every required name is a declared property")
def required_declared(subject: Subject) -> Outcome:
    """Pass when required is a list of names that are all declared properties."""
    required = subject.raw_required
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return False, "parameters.required must be an array of names"
    missing = [r for r in required if r not in subject.props]
    if missing:
        return False, f"required but not declared in properties: {', '.join(missing)}"
    return True, "ok"


@CHECKS.register("property_fields", "every property has a JSON type and a description")
def property_fields(subject: Subject) -> Outcome:
    """Pass when every property has a JSON type and a non-empty description."""
    problems = []
    for name, prop in subject.props.items():
        if prop.get("type") not in JSON_TYPES:
            problems.append(
                f"{name}: type must be one of {'/'.join(JSON_TYPES)}, not {prop.get('type')!r}"
            )
        if not isinstance(prop.get("description"), str) or not prop["description"].strip():
            problems.append(f"{name}: description is missing")
    return (not problems, "; ".join(problems) or "ok")
