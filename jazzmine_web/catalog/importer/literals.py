"""Evaluate the literal values of a call's arguments from its syntax tree, never running it."""

from __future__ import annotations

import ast
from dataclasses import fields
from typing import Any

from jazzmine.core.tools import ToolParameter

_PARAM_ARGS = tuple(f.name for f in fields(ToolParameter))


class NotLiteral(Exception):
    """A call argument the importer cannot take: the node at fault and, when known, why."""

    def __init__(self, node: ast.AST, why: str = "", *, misuse: bool = False) -> None:
        self.node = node
        self.why = why
        # A misuse (unknown or repeated argument) is about the call, not about a value.
        self.misuse = misuse


def callee_name(func: ast.expr) -> str | None:
    """Return `x` for `x(...)` and `y` for `a.b.y(...)`."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _literal(node: ast.expr) -> Any:
    """Evaluate a literal expression; `ToolParameter(...)` with literal arguments is one too."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (bytes, complex)) or node.value is Ellipsis:
            raise NotLiteral(node, "bytes, complex and ... are not JSON values")
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        result: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                raise NotLiteral(value, "`**` unpacking is not a literal")
            name = _literal(key)
            # JSON object keys are strings; a list key would also be unhashable (TypeError).
            if not isinstance(name, str):
                raise NotLiteral(key, "dict keys must be strings, as in JSON")
            result[name] = _literal(value)
        return result
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
        and not isinstance(node.operand.value, bool)
    ):
        return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
    if isinstance(node, ast.Call) and callee_name(node.func) == "ToolParameter":
        return bind(node, _PARAM_ARGS, "ToolParameter")
    raise NotLiteral(node)


def bind(call: ast.Call, names: tuple[str, ...], what: str) -> dict[str, Any]:
    """Map a call's literal arguments onto parameter names, as Python would."""
    bound: dict[str, Any] = {}
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            raise NotLiteral(arg, "`*` unpacking is not a literal")
        if index >= len(names):
            raise NotLiteral(
                arg, f"{what}() takes at most {len(names)} positional arguments", misuse=True
            )
        bound[names[index]] = _literal(arg)
    for keyword in call.keywords:
        if keyword.arg is None:
            raise NotLiteral(keyword.value, "`**` unpacking is not a literal")
        if keyword.arg not in names:
            raise NotLiteral(
                keyword.value,
                f"{what}() has no argument {keyword.arg!r} (it takes {', '.join(names)})",
                misuse=True,
            )
        if keyword.arg in bound:
            raise NotLiteral(keyword.value, f"{what}() got {keyword.arg!r} twice", misuse=True)
        bound[keyword.arg] = _literal(keyword.value)
    return bound
