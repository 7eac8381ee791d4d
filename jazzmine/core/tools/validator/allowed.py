"""What a script may name, call, bind and write: the tables and each tool list's name sets.

The lists themselves (safe builtins, pre-imported modules and their attributes, forbidden
attributes) live in `safety`, shared with the in-sandbox harness; this module derives from them
the sets the checker looks names up in, the few rules only the static wall needs (names never
to bind, builtins only to call) and the subset of Python syntax the checker descends into.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable
from functools import lru_cache

from jazzmine.core.tools.safety import (
    EMIT_HELPERS,
    FORBIDDEN_ATTRIBUTES,
    FRAMEWORK_NAMES,
    PREIMPORTED_MODULES,
    SAFE_BUILTINS,
    SAFE_CONSTANTS,
    SAFE_EXCEPTIONS,
)

# Builtins that run code from strings, touch the process or the interpreter, or only serve
# introspection. Named here (rather than merely "unknown") so the message can say why.
FORBIDDEN_CALLS: frozenset[str] = frozenset(
    {
        # The seed's list
        "exec", "eval", "compile", "open", "__import__", "exit", "input",
        # Same powers under other names
        "quit", "breakpoint", "help", "license", "credits", "copyright", "globals", "locals",
        "vars", "dir", "setattr", "delattr", "memoryview", "classmethod", "staticmethod",
        "property", "super", "object", "__build_class__",
        # Python 2 spellings that LLMs still produce from old training data
        "execfile", "reload", "file", "raw_input",
    }
)  # fmt: skip

# Names the harness or Python already gives a meaning. A script may not bind any of them: the
# soundness argument in the package docstring relies on no builtin name ever being rebound.
# Site-added names are listed by hand because `dir(builtins)` lacks them under `python -S`.
_PYTHON_BUILTINS: frozenset[str] = frozenset(dir(builtins)) | {
    "exit", "quit", "help", "copyright", "credits", "license",
} - {"_"}  # fmt: skip

# `getattr`, `hasattr` and `type` are safe only in the call shapes the validator checks, so
# they may be called directly but never passed around (`map(getattr, objs, names)`). One gap
# is accepted knowingly: `type(type(x))` is `type` itself and can then build a class from a
# dict. That grants nothing new: the class body can only hold values and functions this
# validator already accepted, and reaching anything through the class still needs an
# underscore or forbidden attribute.
CALL_ONLY: frozenset[str] = frozenset({"getattr", "hasattr", "type"})
EMIT_COUNTED: frozenset[str] = frozenset({"emit_result", "emit_intermediate"})
EMIT_NAMES: frozenset[str] = frozenset(EMIT_HELPERS)
MODULE_NAMES: frozenset[str] = frozenset(PREIMPORTED_MODULES)
_VALUE_OK_BASE: frozenset[str] = (
    (SAFE_BUILTINS - CALL_ONLY) | SAFE_EXCEPTIONS | SAFE_CONSTANTS | FRAMEWORK_NAMES
)
_CALL_OK_BASE: frozenset[str] = (SAFE_BUILTINS - CALL_ONLY) | SAFE_EXCEPTIONS | FRAMEWORK_NAMES
_RESERVED_BASE: frozenset[str] = (
    _PYTHON_BUILTINS
    | FORBIDDEN_CALLS
    | SAFE_BUILTINS
    | SAFE_EXCEPTIONS
    | SAFE_CONSTANTS
    | FRAMEWORK_NAMES
    | EMIT_NAMES
    | MODULE_NAMES
)
# Attribute names `getattr`/`hasattr` may not be given even as literals: `format` would hand
# out an unchecked `str.format`, the rest are already forbidden as plain attributes.
GETATTR_DENIED: frozenset[str] = FORBIDDEN_ATTRIBUTES | {"format", "format_map"}

# Child fields to descend into, per node type: (single-node fields, list fields). Anything
# not listed here (and not handled specially in `Checker._walk`) is unsupported syntax.
FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {
    ast.Module: ((), ("body",)),
    ast.Expr: (("value",), ()),
    ast.Assign: (("value",), ("targets",)),
    ast.AugAssign: (("target", "value"), ()),
    ast.AnnAssign: (("target", "annotation", "value"), ()),
    ast.Return: (("value",), ()),
    ast.Delete: ((), ("targets",)),
    ast.For: (("target", "iter"), ("body", "orelse")),
    ast.While: (("test",), ("body", "orelse")),
    ast.If: (("test",), ("body", "orelse")),
    ast.Raise: (("exc", "cause"), ()),
    ast.Try: ((), ("body", "handlers", "orelse", "finalbody")),
    ast.Assert: (("test", "msg"), ()),
    ast.Pass: ((), ()),
    ast.Break: ((), ()),
    ast.Continue: ((), ()),
    ast.BoolOp: ((), ("values",)),
    ast.NamedExpr: (("target", "value"), ()),
    ast.BinOp: (("left", "right"), ()),
    ast.UnaryOp: (("operand",), ()),
    ast.IfExp: (("test", "body", "orelse"), ()),
    ast.Dict: ((), ("keys", "values")),
    ast.Set: ((), ("elts",)),
    ast.List: ((), ("elts",)),
    ast.Tuple: ((), ("elts",)),
    ast.ListComp: (("elt",), ("generators",)),
    ast.SetComp: (("elt",), ("generators",)),
    ast.GeneratorExp: (("elt",), ("generators",)),
    ast.DictComp: (("key", "value"), ("generators",)),
    ast.Compare: (("left",), ("comparators",)),
    ast.FormattedValue: (("value", "format_spec"), ()),
    ast.JoinedStr: ((), ("values",)),
    ast.Subscript: (("value", "slice"), ()),
    ast.Starred: (("value",), ()),
    ast.Slice: (("lower", "upper", "step"), ()),
    ast.keyword: (("value",), ()),
    type(None): ((), ()),  # `{**d}` keys and missing kw-only defaults are None in lists
}

# Node types that only carry operators or contexts; reached only by the generic descent into
# unsupported syntax, where they must not be reported a second time.
INERT: tuple[type, ...] = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


def tool_names(allowed_tools: Iterable[str]) -> frozenset[str]:
    """Keep the tool names that can be plain, public identifiers."""
    if isinstance(allowed_tools, str):
        allowed_tools = (allowed_tools,)  # one tool name, not an iterable of letters
    if allowed_tools is None or isinstance(allowed_tools, bytes):
        return frozenset()
    try:
        return frozenset(
            name
            for name in allowed_tools
            if isinstance(name, str) and name.isidentifier() and not name.startswith("_")
        )
    except TypeError:
        return frozenset()


class Context:
    """The name sets for one list of tools, built once and cached."""

    __slots__ = ("call_ok", "reserved", "tools", "value_ok", "value_special")

    def __init__(self, tools: frozenset[str]) -> None:
        self.tools = tools - FORBIDDEN_CALLS
        self.value_ok = _VALUE_OK_BASE - self.tools
        self.call_ok = (_CALL_OK_BASE | self.tools | {"emit_log"}) - EMIT_COUNTED
        self.value_special = FORBIDDEN_CALLS | self.tools | EMIT_NAMES | MODULE_NAMES | CALL_ONLY
        self.reserved = _RESERVED_BASE | self.tools


@lru_cache(maxsize=64)
def context(tools: frozenset[str]) -> Context:
    """Build (or reuse) the name sets for `tools`."""
    return Context(tools)
