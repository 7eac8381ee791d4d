"""Say why an argument is not a literal, and where inside it, the way its author reads it."""

from __future__ import annotations

import ast
from typing import Any

from ...studio.untrusted import unkeepable_problem
from .literals import NotLiteral, bind, callee_name
from .problems import ImportProblem


def _code(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except RecursionError:
        # ast.unparse recurses deeper than the parser: `- - - ... 1` 500 deep parses fine.
        return "(an expression too deeply nested to show)"
    return text if len(text) <= 80 else text[:77] + "..."


_COMPUTED = (ast.BinOp, ast.BoolOp, ast.UnaryOp, ast.Compare, ast.IfExp, ast.Subscript)
_TYPE_NAMES = frozenset({"str", "int", "float", "bool", "list", "dict", "object", "Any"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _why_not_a_value(node: ast.AST) -> str:
    """Say what the node is and why the importer cannot take it, the way its author reads it."""
    unrun = "the importer reads the file without running it, so"
    if isinstance(node, ast.Name) and node.id in _TYPE_NAMES:
        return f"{node.id} is the Python type itself: write its name as a string, {node.id!r}"
    if isinstance(node, ast.Name):
        return f"{node.id!r} is a variable, and {unrun} it cannot look it up: write the value here"
    if isinstance(node, ast.Attribute):
        return f"it is an attribute, and {unrun} it cannot look it up: write the value here"
    if isinstance(node, ast.Call):
        callee = callee_name(node.func) or "a function"
        return (
            f"it calls {callee}(), and {unrun} nothing is called: write the result here "
            "(only ToolParameter(...) may be written as a call)"
        )
    if isinstance(node, _COMPREHENSIONS):
        return f"it is a comprehension, and {unrun} it is never computed: write the items out"
    if isinstance(node, ast.JoinedStr):
        return f"it is an f-string, and {unrun} it is never formatted: write the plain string"
    if isinstance(node, ast.Starred):
        return (
            "`*` unpacks only when the file runs, and the importer never runs it: write the items"
        )
    if isinstance(node, ast.Set):
        return "a set is not a JSON value: write a list [...] instead"
    if isinstance(node, ast.Lambda):
        return "a lambda is a function, not a value"
    if isinstance(node, _COMPUTED):
        return f"it is an expression, and {unrun} it is never computed: write its value"
    return (
        "decorator arguments must be literals (strings, numbers, lists, dicts, ToolParameter(...) "
        "with literal arguments), because the file is never executed"
    )


def _where(value: ast.AST, target: ast.AST) -> list[str]:
    """Return the steps from an argument's value down to `target` (items, keys, arguments)."""
    if value is target:
        return []
    children: list[tuple[str, ast.AST]] = []
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        children = [(f"item {i + 1}", e) for i, e in enumerate(value.elts)]
    elif isinstance(value, ast.Dict):
        for key, item in zip(value.keys, value.values, strict=True):
            label = f"key {key.value!r}" if isinstance(key, ast.Constant) else "a key"
            if key is not None:
                children.append((label, key))
            children.append((label, item))
    elif isinstance(value, ast.Call):
        name = callee_name(value.func) or "call"
        first = value.args[0] if value.args else None
        head = f"{first.value!r}, " if isinstance(first, ast.Constant) else ""
        children = [(f"{name}(argument {i + 1})", a) for i, a in enumerate(value.args)]
        children += [(f"{name}({head}{k.arg or '**'}=…)", k.value) for k in value.keywords]
    for label, child in children:
        if any(n is target for n in ast.walk(child)):
            return [label, *_where(child, target)]
    return []


def bind_or_problem(
    call: ast.Call,
    names: tuple[str, ...],
    what: str,
    *,
    filename: str,
    line: int,
    label: str,
    problems: list[ImportProblem],
) -> dict[str, Any] | None:
    """Return `bind`'s arguments, or None once the problem of a value that is not a literal
    is recorded: on the value's line (`line` when it has none), headed by `label`.

    A string holding a NUL character or half of a surrogate pair (an escape, `"\\x00"`,
    `"\\ud800"`: the file itself has neither) is refused too, naming where it is: the catalog
    can neither store nor show such text.
    """
    try:
        bound = bind(call, names, what)
    except NotLiteral as exc:
        argument = _argument_name(call, exc.node, names)
        reason = _describe(exc, argument, _argument_value(call, exc.node))
        problems.append(
            ImportProblem(filename, getattr(exc.node, "lineno", line), f"{label}: {reason}")
        )
        return None
    problem = unkeepable_problem(bound)
    if problem is not None:
        problems.append(ImportProblem(filename, line, f"{label}: {problem}"))
        return None
    return bound


def _describe(exc: NotLiteral, argument: str, value: ast.AST | None = None) -> str:
    """Return the real reason an argument was refused, and where inside it."""
    steps = _where(value, exc.node) if value is not None else []
    if exc.misuse:
        # The last step names the misused argument itself, which the reason names already.
        inside = steps[:-1]
        return f"argument {argument!r} ({', '.join(inside)}): {exc.why}" if inside else exc.why
    why = exc.why or _why_not_a_value(exc.node)
    if not steps:
        return f"argument {argument!r} is not a literal: `{_code(exc.node)}`: {why}"
    # Inside a list, dict or ToolParameter(...): the container is fine, one value in it is not.
    where = ", ".join(steps)
    return f"argument {argument!r} ({where}): `{_code(exc.node)}` is not a literal value: {why}"


def _argument_value(call: ast.Call, node: ast.AST) -> ast.AST | None:
    """Return the value of the call argument that contains `node`."""
    for value in [*call.args, *(k.value for k in call.keywords)]:
        if any(child is node for child in ast.walk(value)):
            return value
    return None


def _argument_name(call: ast.Call, node: ast.AST, names: tuple[str, ...]) -> str:
    """Return the name of the call argument that contains `node`."""
    for index, arg in enumerate(call.args):
        if any(child is node for child in ast.walk(arg)):
            return names[index] if index < len(names) else f"#{index + 1}"
    for keyword in call.keywords:
        if any(child is node for child in ast.walk(keyword.value)):
            return keyword.arg or "**"
    return "?"
