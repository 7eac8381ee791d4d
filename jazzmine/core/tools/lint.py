"""Lint of a Python tool: does what the LLM is told match what the function does?

The LLM reads each parameter's documented default (the `ToolParameter`, i.e. the XML) and
people read the docstring; the function uses its own signature defaults. When they differ the
LLM leaves a value out believing it gets one thing and the tool quietly uses another. Script
tools have the same check (`jazzmine.scripttools.lint`, item `defaults_match_script`); this is
its Python counterpart, computed statically from the source (nothing is executed).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from jazzmine.jsontext import json_shown

from .types import ToolParameter

# How a value was found: a literal we can compare, no default at all, or an expression.
LITERAL, ABSENT, UNKNOWN = "literal", "absent", "unknown"


@dataclass(frozen=True)
class LintItem:
    """One checklist item: its id, what it checks, whether it passed and why.

    Python tools' checks here and script tools' checks (`jazzmine.scripttools.lint`) both
    answer with it, so pages render both lists alike.
    """

    id: str
    title: str
    passed: bool
    message: str

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict for the UI."""
        return {"id": self.id, "title": self.title, "passed": self.passed, "message": self.message}


TITLES: dict[str, str] = {
    "defaults_match_signature": "documented defaults equal the function's own defaults",
    "optional_have_defaults": "every parameter documented as optional has a default in the function",
    "parameters_documented": "every parameter of the function is documented",
    "parameter_types_known": "every documented type is a Python or JSON Schema type",
}

# Type names an LLM reads for what they are, in either spelling the catalog meets: Python's
# (`List[str]`, `int | None`) and JSON Schema's (`integer`, `array`), compared lower-case.
# Anything else is most likely a typo (`strnig`): the LLM reads it as written, and bash, which
# maps types to its flags' schema, leaves such a parameter unchecked.
KNOWN_TYPES = frozenset(
    name.lower()
    for name in (
        "str", "int", "float", "bool", "list", "dict", "tuple", "set", "frozenset", "bytes",
        "complex", "object", "None", "NoneType", "Any", "List", "Dict", "Tuple", "Set",
        "FrozenSet", "Optional", "Union", "Literal", "Sequence", "Mapping", "Iterable",
        "string", "integer", "number", "boolean", "array", "null",
        "datetime", "date", "time", "timedelta", "Decimal", "UUID",
    )
)  # fmt: skip


@dataclass(frozen=True)
class Found:
    """A default as one source states it."""

    kind: str  # LITERAL | ABSENT | UNKNOWN
    value: Any = None
    text: str = ""  # a backticked word the docstring gives as the default (``asc``)


def lint_python_tool(
    source: str, parameters: Iterable[ToolParameter | Mapping[str, Any]]
) -> list[LintItem]:
    """Run the checklist over a tool function's source and its documented parameters."""
    params = [p if isinstance(p, ToolParameter) else ToolParameter(**dict(p)) for p in parameters]
    try:
        node = _function(source)
    except (SyntaxError, ValueError) as exc:
        skipped = f"not checked: {exc}"
        return [LintItem(key, title, False, skipped) for key, title in TITLES.items()]
    signature = signature_defaults(node)
    documented = docstring_defaults(node, list(signature))
    results = {
        "defaults_match_signature": _check_defaults(params, signature, documented),
        "optional_have_defaults": _check_optional(params, signature),
        "parameters_documented": _check_documented(params, node),
        "parameter_types_known": check_types(params),
    }
    return [LintItem(key, title, *results[key]) for key, title in TITLES.items()]


def lint_passed(items: Iterable[LintItem]) -> bool:
    """Tell whether every item passed."""
    return all(item.passed for item in items)


# The function


def _function(source: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node
    raise ValueError("the source defines no function")


def _literal(node: ast.expr) -> Found:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return Found(UNKNOWN)
    value = _jsonish(value)
    return Found(LITERAL, value) if _json_safe(value) else Found(UNKNOWN)


def _jsonish(value: Any) -> Any:
    """Return a value as JSON would carry it: tuples become lists."""
    if isinstance(value, (list, tuple)):
        return [_jsonish(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonish(v) for k, v in value.items()}
    return value


def _json_safe(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def signature_defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Found]:
    """Return each named argument of the function with its default as the signature has it."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    offset = len(positional) - len(args.defaults)
    found: dict[str, Found] = {}
    for index, arg in enumerate(positional):
        default = args.defaults[index - offset] if index >= offset else None
        found[arg.arg] = _literal(default) if default is not None else Found(ABSENT)
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        found[arg.arg] = _literal(kw_default) if kw_default is not None else Found(ABSENT)
    return found


# The docstring

_SECTION = re.compile(
    r"^(?:(?:args|arguments|parameters|params|other parameters|keyword args|keyword arguments|"
    r"returns?|raises|yields|examples?|notes?|see also|attributes|warnings?)\s*:?|-{3,}|=+|"
    r":(?:returns?|rtype|raises?|yields?)\b.*)$",
    re.IGNORECASE,
)
# `:param limit:` or `:param int limit:` (Sphinx)
_SPHINX_ENTRY = re.compile(r"^:param\s+(?:[^:]*?\s)?\*{0,2}(\w+)\s*:")
# `limit (int): ...` or `limit: ...` (Google), `limit : int, default 20` (NumPy)
_PLAIN_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:(?!:)")
_VALUE = (
    r"``[^`]+``|`[^`]+`|'[^'\n]*'|\"[^\"\n]*\"|\[[^\]\n]*\]|\{[^}\n]*\}|"
    r"[-+]?(?:\d[\d_]*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?|(?:true|false|none|null)\b"
)
# "Defaults to 20", "(default: 20)", "default=20", "default 20", "Default is ``20``"
_DEFAULT = re.compile(
    r"\bdefault(?:s|ed)?(?:\s+(?:value\s+)?(?:to|is|of))?\s*[:=]?\s*(?P<value>" + _VALUE + ")",
    re.IGNORECASE,
)
_WORDS = {"true": True, "false": False, "none": None, "null": None}


def docstring_defaults(
    node: ast.FunctionDef | ast.AsyncFunctionDef, names: Iterable[str]
) -> dict[str, Found]:
    """Return the defaults the function's docstring states, parameter by parameter.

    Reads the usual spellings: Google (`limit (int): ... Defaults to 20.`), Sphinx
    (`:param limit: ... (default: 20)`) and NumPy (`limit : int, default 20`). A parameter's
    entry runs until the next entry, a section header or a blank line.
    """
    doc = ast.get_docstring(node)
    if not doc:
        return {}
    wanted = set(names)
    found: dict[str, Found] = {}
    current: str | None = None
    for raw in doc.splitlines():
        line = raw.strip()
        if not line or _SECTION.match(line):
            current = None
            continue
        match = _SPHINX_ENTRY.match(line) or _PLAIN_ENTRY.match(line)
        if match and match.group(1) in wanted:
            current = match.group(1)
            line = line[match.end() :]
        elif line.startswith(":"):
            current = None  # another Sphinx field (`:type x:`, `:param other:`)
            continue
        if current is None or current in found:
            continue
        default = _DEFAULT.search(line)
        if default is not None:
            found[current] = _doc_value(default.group("value"))
    return found


def _doc_value(text: str) -> Found:
    inner = text.strip("`") if text.startswith("`") else text
    lowered = inner.lower()
    if lowered in _WORDS:
        return Found(LITERAL, _WORDS[lowered])
    try:
        value = ast.literal_eval(inner)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        # A backticked word (``asc``) names a string default in most docstrings.
        return Found(UNKNOWN, text=inner) if text.startswith("`") else Found(UNKNOWN)
    value = _jsonish(value)
    return Found(LITERAL, value) if _json_safe(value) else Found(UNKNOWN)


# Checks


def json_same(a: Any, b: Any) -> bool:
    """Compare JSON values without letting True equal 1 or "20" equal 20."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _shown(value: Any) -> str:
    return json_shown(value)


def _check_defaults(
    params: list[ToolParameter], signature: dict[str, Found], documented: dict[str, Found]
) -> tuple[bool, str]:
    problems: list[str] = []
    by_name = {p.name: p for p in params}
    for name, own in signature.items():
        if own.kind == UNKNOWN:
            continue  # an expression (a constant, a call): nothing to compare statically
        param = by_name.get(name)
        if param is not None:
            problem = _against_parameter(param, own)
            if problem:
                problems.append(problem)
        doc = documented.get(name)
        if doc is not None:
            problem = _against_docstring(name, doc, own)
            if problem:
                problems.append(problem)
    return (not problems, "; ".join(problems) or "ok")


def _against_parameter(param: ToolParameter, own: Found) -> str:
    name, said = param.name, param.default
    # `default=None` is how a ToolParameter says "no default": the XML shows none.
    if said is not None:
        if own.kind == ABSENT:
            return (
                f"{name}: documented default {_shown(said)} but the function has no default "
                "(a call that leaves it out fails)"
            )
        if not json_same(_jsonish(said), own.value):
            return (
                f"{name}: documented default {_shown(said)} but the function's default is "
                f"{_shown(own.value)}"
            )
        return ""
    if own.kind == LITERAL and own.value is not None and not param.required:
        return (
            f"{name}: the function defaults to {_shown(own.value)} but no default is "
            "documented (the LLM cannot tell what leaving it out means)"
        )
    return ""


def _against_docstring(name: str, doc: Found, own: Found) -> str:
    if own.kind == ABSENT:
        if doc.kind == LITERAL and doc.value is not None:
            return (
                f"{name}: the docstring says default {_shown(doc.value)} but the function has "
                "no default"
            )
        return ""
    if doc.kind == LITERAL:
        if not json_same(doc.value, own.value):
            return (
                f"{name}: the docstring says default {_shown(doc.value)} but the function's "
                f"default is {_shown(own.value)}"
            )
    elif doc.text and isinstance(own.value, str) and doc.text != own.value:
        return (
            f"{name}: the docstring says default {doc.text!r} but the function's default is "
            f"{_shown(own.value)}"
        )
    return ""


def _check_optional(params: list[ToolParameter], signature: dict[str, Found]) -> tuple[bool, str]:
    missing = [
        p.name
        for p in params
        if not p.required
        and p.default is None
        and signature.get(p.name, Found(UNKNOWN)).kind == ABSENT
    ]
    if missing:
        return False, (
            f"documented as optional but the function has no default: {', '.join(missing)} "
            "(a call that leaves it out fails; mark it required or give it a default)"
        )
    return True, "ok"


def _check_documented(
    params: list[ToolParameter], node: ast.FunctionDef | ast.AsyncFunctionDef
) -> tuple[bool, str]:
    # A script may pass a tool only what its prompt documents (the sandbox refuses the rest):
    # an undocumented parameter keeps its default forever, and one without a default fails
    # every call.
    documented = {p.name for p in params}
    args = node.args
    named = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    signature = signature_defaults(node)
    required = [n for n in named if n not in documented and signature[n].kind == ABSENT]
    if required:
        return False, (
            f"the function needs {', '.join(required)}, which no parameter documents: no script "
            "may pass it, so every call fails (document it)"
        )
    kept = [n for n in named if n not in documented]
    if kept:
        return False, (
            f"no script may pass {', '.join(kept)} (not documented): it always keeps its default; "
            "document it if the LLM should choose it, or make it a constant of the module"
        )
    return True, "ok"


def check_types(params: Iterable[ToolParameter]) -> tuple[bool, str]:
    """Name each documented parameter whose type is not one an LLM knows (a typo, mostly)."""
    unknown = [f"{p.name} ({p.type!r})" for p in params if not type_known(p.type)]
    if unknown:
        return False, (
            f"not a Python or JSON Schema type: {', '.join(unknown)} (the LLM reads it as "
            "written; bash does not check the value)"
        )
    return True, "ok"


def type_known(text: object) -> bool:
    """Tell whether a type string is built only of known type names (`Optional[List[str]]`)."""
    if not isinstance(text, str):
        return False  # a row stored before types were checked: read, never a crash
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            # `typing.List`: the last part names the type, the module before it says nothing.
            if node.attr.lower() not in KNOWN_TYPES:
                return False
        elif isinstance(node, ast.Name):
            if node.id.lower() not in KNOWN_TYPES and node.id != "typing":
                return False
        elif isinstance(node, ast.Constant):
            continue  # Literal["asc", "desc"], None
        elif not isinstance(
            node, (ast.Expression, ast.Subscript, ast.Tuple, ast.BinOp, ast.BitOr, ast.Load)
        ):
            return False
    return True


__all__ = [
    "KNOWN_TYPES",
    "TITLES",
    "LintItem",
    "docstring_defaults",
    "lint_passed",
    "lint_python_tool",
    "signature_defaults",
    "type_known",
]
