"""Statically check an LLM-written script before it may run in a sandbox.

The validator is default-deny: a script may use only the syntax, names and attributes this
module knows to be safe, and everything else is reported as a violation that says, in words an
LLM can act on, how to rewrite the offending line. It is the first of several walls (the
harness's restricted builtins and the container come after it), so it refuses whole families
of escapes rather than the handful of spellings a deny-list would catch.

Why loads are checked and not only calls. A call to a name the script bound itself
(`helper(...)`, `f = sorted; f(xs)`) is allowed because every value such a name can hold was
produced by code this validator accepted: every *load* of a name is checked (only safe
builtins, tools, helpers, pre-imported modules under their attribute lists, or names the script
binds), every attribute is checked, and `getattr`/`type`/`.format` are checked at their call
sites and may not be aliased. A script therefore never holds `eval`, `open` or a module it could
call through an innocent-looking variable. Binding analysis is flow-insensitive (a name bound
anywhere counts as bound everywhere); that is sound because a script may not bind any Python
builtin name, so a load the script did not actually bind at run time raises NameError instead
of silently falling through to a builtin. This assumes, as the harness guarantees, that scripts
run in a fresh globals dict holding only tools, helpers, modules and `ToolResponse`.

What stays out of scope: values tools hand back are trusted to be plain data, and resource
exhaustion (`"x" * 10**10`, catastrophic regexes, `time.sleep`) is the container's job.
"""

from __future__ import annotations

import ast
import builtins
import codecs
import re
import threading
import unicodedata
import warnings
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from jazzmine.core.tools.safety import (
    EMIT_HELPERS,
    FORBIDDEN_ATTRIBUTES,
    FRAMEWORK_NAMES,
    PREIMPORTED_MODULES,
    SAFE_BUILTINS,
    SAFE_CONSTANTS,
    SAFE_EXCEPTIONS,
    format_field_problem,
)

_WARNINGS_LOCK = threading.Lock()

__all__ = ["FORBIDDEN_CALLS", "MAX_SCRIPT_CHARS", "validate_script"]

# Large enough for any script an LLM writes (a 300-line script is ~12 KB); small enough that
# parsing a hostile payload cannot stall the web process that validates as the user types.
MAX_SCRIPT_CHARS = 200_000

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

_MODULES_SENTENCE = "the modules json, time, math, re and datetime are already imported"

_CODE_FROM_STRINGS = "Running code built from strings is not allowed; write the logic directly."
_INTROSPECTION = "Introspection is not available; refer to your variables and dict keys by name."
_FORBIDDEN_HINTS: dict[str, str] = {
    "open": "Files are not available in the sandbox; get data from the tools instead.",
    "file": "Files are not available in the sandbox; get data from the tools instead.",
    "exec": _CODE_FROM_STRINGS,
    "eval": _CODE_FROM_STRINGS,
    "compile": _CODE_FROM_STRINGS,
    "execfile": _CODE_FROM_STRINGS,
    "__import__": f"Imports are not allowed; {_MODULES_SENTENCE}, use them directly.",
    "reload": f"Imports are not allowed; {_MODULES_SENTENCE}, use them directly.",
    "exit": "To finish early, call emit_result(...) with what you have and let the script end.",
    "quit": "To finish early, call emit_result(...) with what you have and let the script end.",
    "input": "Nobody can type input into the sandbox; get data from the tools or use literals.",
    "raw_input": "Nobody can type input into the sandbox; get data from the tools or use literals.",
    "breakpoint": "There is no interactive debugger; report progress with emit_log(...).",
    "help": "There is no interactive help; the tools are documented in the prompt.",
    "globals": _INTROSPECTION,
    "locals": _INTROSPECTION,
    "vars": _INTROSPECTION,
    "dir": _INTROSPECTION,
    "setattr": "Keep values in variables or dict keys instead of setting attributes.",
    "delattr": "Keep values in variables or dict keys instead of deleting attributes.",
}
_FORBIDDEN_DEFAULT_HINT = (
    "It is not available in sandbox scripts; use the tools, the safe built-ins and plain Python."
)

# Names the harness or Python already gives a meaning. A script may not bind any of them: the
# soundness argument in the module docstring relies on no builtin name ever being rebound.
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
_CALL_ONLY: frozenset[str] = frozenset({"getattr", "hasattr", "type"})
_EMIT_COUNTED: frozenset[str] = frozenset({"emit_result", "emit_intermediate"})
_EMIT_NAMES: frozenset[str] = frozenset(EMIT_HELPERS)
_MODULE_NAMES: frozenset[str] = frozenset(PREIMPORTED_MODULES)
_VALUE_OK_BASE: frozenset[str] = (
    (SAFE_BUILTINS - _CALL_ONLY) | SAFE_EXCEPTIONS | SAFE_CONSTANTS | FRAMEWORK_NAMES
)
_CALL_OK_BASE: frozenset[str] = (SAFE_BUILTINS - _CALL_ONLY) | SAFE_EXCEPTIONS | FRAMEWORK_NAMES
_RESERVED_BASE: frozenset[str] = (
    _PYTHON_BUILTINS
    | FORBIDDEN_CALLS
    | SAFE_BUILTINS
    | SAFE_EXCEPTIONS
    | SAFE_CONSTANTS
    | FRAMEWORK_NAMES
    | _EMIT_NAMES
    | _MODULE_NAMES
)
# Attribute names `getattr`/`hasattr` may not be given even as literals: `format` would hand
# out an unchecked `str.format`, the rest are already forbidden as plain attributes.
_GETATTR_DENIED: frozenset[str] = FORBIDDEN_ATTRIBUTES | {"format", "format_map"}

_UNSUPPORTED: dict[type, str] = {
    ast.ClassDef: "class definitions are not supported in sandbox scripts; rewrite using "
    "functions and dicts",
    ast.AsyncFunctionDef: "async functions are not supported in sandbox scripts; rewrite using "
    "a plain def (tools are called like plain functions, the sandbox runs async tools for you)",
    ast.Await: "await is not supported in sandbox scripts; rewrite by calling the tool like a "
    "plain function (the sandbox runs async tools for you)",
    ast.AsyncFor: "async for is not supported in sandbox scripts; rewrite using a plain for loop",
    ast.AsyncWith: "async with is not supported in sandbox scripts; rewrite using plain calls",
    ast.With: "with statements are not supported in sandbox scripts (no files or context "
    "managers are available); rewrite using plain calls",
    ast.Match: "match statements are not supported in sandbox scripts; rewrite using if/elif/else",
    ast.Global: "global statements are not supported in sandbox scripts; rewrite by passing "
    "values in as arguments and returning results",
    ast.Nonlocal: "nonlocal statements are not supported in sandbox scripts; rewrite by passing "
    "values in as arguments and returning results",
    ast.Yield: "yield is not supported in sandbox scripts; rewrite by building and returning a "
    "list",
    ast.YieldFrom: "yield from is not supported in sandbox scripts; rewrite by building and "
    "returning a list",
    ast.TryStar: "except* is not supported in sandbox scripts; rewrite using plain try/except",
}
_IMPORT_MESSAGE = (
    f"import statements are not allowed. {_MODULES_SENTENCE.capitalize()}: use them directly "
    "(e.g. json.dumps(...), math.sqrt(...)) and delete the import"
)

# Child fields to descend into, per node type: (single-node fields, list fields). Anything
# not listed here (and not handled specially in `_Checker._run`) is unsupported syntax.
_FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {
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
_INERT: tuple[type, ...] = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)

# How the walker hands children back to the stack from the per-node helpers.
_Push = Callable[[Any], None]
_Extend = Callable[[Iterable[Any]], None]

_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)


def validate_script(script: str, allowed_tools: Iterable[str]) -> list[str]:
    """Return the violations in `script` (empty when it may run); never raise."""
    try:
        return _validate(script, allowed_tools)
    except Exception as exc:  # a validator that crashes would let nothing through: report it
        return [
            f"Line 1: the script could not be analysed ({type(exc).__name__}). "
            "Rewrite it as shorter, simpler plain Python."
        ]


def _validate(script: object, allowed_tools: Iterable[str]) -> list[str]:
    """Check the input's shape, parse it and walk the tree once."""
    if not isinstance(script, str):
        return [
            f"Line 1: the script must be text, got {type(script).__name__}. "
            "Send the script body as a string."
        ]
    if type(script) is not str:
        script = str.__str__(script)  # an exact copy: a subclass could lie in its methods
    if len(script) > MAX_SCRIPT_CHARS:
        return [
            f"Line 1: the script is {len(script)} characters long; the limit is "
            f"{MAX_SCRIPT_CHARS}. Write a shorter script that lets the tools do the heavy work."
        ]
    if not script.strip():
        return [_empty_message()]
    nul = script.find("\x00")
    if nul >= 0:
        return [
            f"Line {script.count(chr(10), 0, nul) + 1}: the script contains a NUL byte. "
            "Remove it; scripts are plain text."
        ]
    cookie = _cookie_violation(script)
    if cookie:
        return [cookie]
    try:
        # Invalid escapes like "\d" make the parser warn; under `-W error` a warning becomes a
        # SyntaxError, so without this the verdict on a benign script would depend on the
        # process's warning filters (and every validation would spam the server log).
        # catch_warnings swaps process-wide state, so validations (which run on worker
        # threads in the web app) take turns; the window is one parse long.
        with _WARNINGS_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(script)
    except SyntaxError as exc:
        line = exc.lineno if isinstance(exc.lineno, int) and exc.lineno > 0 else 1
        return [f"Line {line}: syntax error: {exc.msg}. Fix the Python syntax on that line."]
    except (RecursionError, MemoryError):
        return [
            "Line 1: the script is too deeply nested to analyse. "
            "Split long or nested expressions into several statements with variables."
        ]
    except ValueError as exc:  # e.g. lone surrogates, which cannot be encoded as UTF-8
        return [f"Line 1: the script is not valid text ({exc}). Use plain UTF-8 text."]
    if not tree.body:
        return [_empty_message()]
    return _Checker(_context(_tool_names(allowed_tools))).run(tree)


def _empty_message() -> str:
    """Explain that an empty script produces nothing."""
    return (
        "Line 1: the script is empty, so it never calls emit_result or emit_intermediate. "
        "Write a script body that calls the tools and ends with emit_result(<your answer>)."
    )


def _cookie_violation(script: str) -> str | None:
    """Refuse a PEP 263 coding cookie other than UTF-8 in the first two lines.

    `ast.parse` ignores cookies in str input, but a harness that writes the script to a file
    and runs it would honour one, so `# coding: utf_7` would let the runtime see code the
    validator read as a comment (`+AAo-` decodes to a newline).
    """
    end = script.find("\n")
    end = script.find("\n", end + 1) if end >= 0 else -1
    head = script if end < 0 else script[:end]
    if "coding" not in head:
        return None
    for number, line in enumerate(head.split("\n"), start=1):
        match = _COOKIE.match(line)
        if match is None:
            continue
        try:
            encoding = codecs.lookup(match.group(1)).name
        except LookupError:
            encoding = match.group(1)
        if encoding != "utf-8":
            return (
                f"Line {number}: the encoding declaration '{match.group(1)}' is not allowed. "
                "Remove the '# coding:' comment; scripts are always UTF-8."
            )
    return None


def _tool_names(allowed_tools: Iterable[str]) -> frozenset[str]:
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


class _Context:
    """The name sets for one list of tools, built once and cached."""

    __slots__ = ("call_ok", "reserved", "tools", "value_ok", "value_special")

    def __init__(self, tools: frozenset[str]) -> None:
        self.tools = tools - FORBIDDEN_CALLS
        self.value_ok = _VALUE_OK_BASE - self.tools
        self.call_ok = (_CALL_OK_BASE | self.tools | {"emit_log"}) - _EMIT_COUNTED
        self.value_special = FORBIDDEN_CALLS | self.tools | _EMIT_NAMES | _MODULE_NAMES | _CALL_ONLY
        self.reserved = _RESERVED_BASE | self.tools


@lru_cache(maxsize=64)
def _context(tools: frozenset[str]) -> _Context:
    """Build (or reuse) the name sets for `tools`."""
    return _Context(tools)


class _Checker:
    """Walk one tree once and collect violations."""

    __slots__ = ("bound", "ctx", "emits", "pending_calls", "pending_loads", "violations")

    def __init__(self, ctx: _Context) -> None:
        self.ctx = ctx
        self.violations: list[tuple[int, str]] = []
        self.bound: set[str] = set()
        self.pending_loads: list[ast.Name] = []
        self.pending_calls: list[ast.Name] = []
        self.emits = False

    def run(self, tree: ast.Module) -> list[str]:
        """Walk the tree, resolve deferred names, return sorted, unique messages."""
        self._walk(tree)
        self._resolve_pending()
        if not self.emits:
            self.violations.append(
                (
                    1,
                    "the script never calls emit_result or emit_intermediate, so it would "
                    "produce nothing (unproductive). End it with emit_result(<your answer>)",
                )
            )
        seen: set[str] = set()
        out: list[str] = []
        for line, text in sorted(self.violations, key=lambda v: v[0]):
            message = f"Line {line}: {text}" if text.endswith(".") else f"Line {line}: {text}."
            if message not in seen:
                seen.add(message)
                out.append(message)
        return out

    def _add(self, node: ast.AST, text: str) -> None:
        """Record a violation at `node`'s line."""
        self.violations.append((getattr(node, "lineno", 1) or 1, text))

    # The hot loop. One explicit stack instead of NodeVisitor recursion: no RecursionError on
    # deep trees, and a type-identity dispatch costs far less than `visit_<name>` lookups.
    def _walk(self, tree: ast.AST) -> None:
        """Visit every node once."""
        ctx = self.ctx
        value_ok = ctx.value_ok
        value_special = ctx.value_special
        call_ok = ctx.call_ok
        reserved = ctx.reserved
        modules = _MODULE_NAMES
        forbidden_attrs = FORBIDDEN_ATTRIBUTES
        fields = _FIELDS
        bound_add = self.bound.add
        pending_loads = self.pending_loads.append
        pending_calls = self.pending_calls.append
        name_t, const_t, attr_t, call_t, load_t = (
            ast.Name,
            ast.Constant,
            ast.Attribute,
            ast.Call,
            ast.Load,
        )
        special = {
            ast.FunctionDef: self._function,
            ast.Lambda: self._lambda,
            ast.comprehension: self._comprehension,
            ast.ExceptHandler: self._handler,
            ast.Import: self._import,
            ast.ImportFrom: self._import,
            ast.AsyncFunctionDef: self._async_function,
            ast.ClassDef: self._class,
        }
        stack: list = [tree]
        pop = stack.pop
        push = stack.append
        extend = stack.extend
        while stack:
            node = pop()
            t = type(node)
            if t is name_t:
                nid = node.id
                if type(node.ctx) is load_t:
                    if nid in value_ok:
                        continue
                    if nid in value_special:
                        self._special_value(node)
                    else:
                        pending_loads(node)
                elif nid in reserved or nid[0] == "_":
                    self._bad_binding(node, nid)
                else:
                    bound_add(nid)
            elif t is const_t:
                continue
            elif t is attr_t:
                attr = node.attr
                if attr[0] == "_" or attr in forbidden_attrs or attr == "format":
                    self._bad_attribute(node, attr)
                if type(node.ctx) is not load_t:
                    self._add(
                        node,
                        f"assigning to or deleting attribute '{attr}' is not supported in "
                        "sandbox scripts. Keep the value in a variable or a dict key instead",
                    )
                value = node.value
                if type(value) is name_t and value.id in modules:
                    self._module_attribute(node, value.id, attr)
                else:
                    push(value)
            elif t is call_t:
                func = node.func
                ft = type(func)
                if ft is name_t:
                    fid = func.id
                    if fid not in call_ok:
                        if fid in _EMIT_COUNTED:
                            self.emits = True
                        elif fid in value_special:
                            self._special_call(node, fid)
                        else:
                            pending_calls(func)
                elif ft is attr_t:
                    attr = func.attr
                    value = func.value
                    if attr == "format":
                        self._format_call(func)
                        if type(value) is not const_t:
                            push(value)
                    else:
                        if attr[0] == "_" or attr in forbidden_attrs:
                            self._bad_attribute(func, attr)
                        if type(value) is name_t and value.id in modules:
                            self._module_attribute(func, value.id, attr)
                        else:
                            push(value)
                else:
                    push(func)
                extend(node.args)
                for keyword in node.keywords:
                    push(keyword.value)
            else:
                spec = fields.get(t)
                if spec is not None:
                    for field in spec[0]:
                        child = getattr(node, field)
                        if child is not None:
                            push(child)
                    for field in spec[1]:
                        extend(getattr(node, field))
                    continue
                handler = special.get(t)
                if handler is not None:
                    handler(node, push, extend)
                else:
                    self._unsupported(node, push)

    # --- names -------------------------------------------------------------------------------

    def _special_value(self, node: ast.Name) -> None:
        """Report a name used as a value that may only be called, or not used at all."""
        nid = node.id
        ctx = self.ctx
        if nid in FORBIDDEN_CALLS:
            self._add(node, f"use of '{nid}' is forbidden. {_forbidden_hint(nid)}")
        elif nid in ctx.tools:
            self._add(
                node,
                f"tool '{nid}' is used without calling it. Call it with parentheses and its "
                f"arguments, e.g. result = {nid}(...), and use the result",
            )
        elif nid in _EMIT_NAMES:
            self._add(
                node,
                f"'{nid}' is used without calling it. Call it with parentheses, e.g. {nid}(value)",
            )
        elif nid in _MODULE_NAMES:
            self._add(node, _module_value_message(nid))
        else:  # _CALL_ONLY
            self._add(
                node,
                f"'{nid}' may only be called directly, not passed around or stored. "
                f"Call it where you need it, e.g. {_call_only_example(nid)}",
            )

    def _special_call(self, node: ast.Call, fid: str) -> None:
        """Check a call to a forbidden, call-only or module name."""
        if fid in FORBIDDEN_CALLS:
            self._add(node, f"call to '{fid}' is forbidden. {_forbidden_hint(fid)}")
        elif fid in _CALL_ONLY:
            self._call_only(node, fid)
        elif fid in _MODULE_NAMES:
            self._add(node, _module_value_message(fid))
        else:  # an emit helper or a tool listed in both `value_special` and `call_ok`
            pass

    def _call_only(self, node: ast.Call, fid: str) -> None:
        """Allow `getattr`/`hasattr` with a literal safe name and one-argument `type`."""
        args = node.args
        starred = any(type(a) is ast.Starred for a in args)
        if fid == "type":
            if len(args) != 1 or node.keywords or starred:
                self._add(
                    node,
                    "type(...) is only allowed with exactly one argument. To test a type, "
                    "use isinstance(value, dict) or type(value) is dict",
                )
            return
        most = 3 if fid == "getattr" else 2
        if node.keywords or starred or not 2 <= len(args) <= most:
            self._add(
                node,
                f"{fid}(...) needs an object and a quoted attribute name, "
                f"e.g. {_call_only_example(fid)}",
            )
            return
        name = args[1]
        if type(name) is not ast.Constant or type(name.value) is not str:
            self._add(
                node,
                f"{fid}(...) with a computed attribute name is not allowed. Write the name as "
                f"a quoted literal, e.g. {_call_only_example(fid)}, or use a dict and d[key]",
            )
            return
        # The parser NFKC-normalises identifiers but not string literals; normalise here so
        # a look-alike spelling cannot pass this check as something other than what it is.
        attr = unicodedata.normalize("NFKC", name.value)
        if not attr or attr[0] == "_" or attr in _GETATTR_DENIED:
            self._add(
                node,
                f"{fid}(...) with the attribute name '{name.value}' is not allowed: it reaches "
                "interpreter internals. Use the object's public methods and dict keys instead",
            )

    def _bad_binding(self, node: ast.AST, name: str) -> None:
        """Report binding a reserved or underscore-prefixed name (a bare `_` is fine)."""
        if name == "_":
            self.bound.add(name)
            return
        ctx = self.ctx
        if name in ctx.tools:
            text = (
                f"'{name}' is a tool and cannot be assigned, redefined or deleted. Store its "
                f"result under another name, e.g. {name}_result = {name}(...)"
            )
        elif name in _EMIT_NAMES:
            text = (
                f"'{name}' is a framework helper and cannot be assigned, redefined or deleted. "
                f"Just call {name}(...)"
            )
        elif name in _MODULE_NAMES:
            text = (
                f"'{name}' is a pre-imported module and cannot be assigned, redefined or "
                f"deleted. Use another variable name, e.g. {name}_value"
            )
        elif name in ctx.reserved:
            text = (
                f"'{name}' is a built-in name and cannot be assigned, redefined or deleted. "
                f"Use another variable name, e.g. {name}_value"
            )
        else:
            text = (
                f"names starting with '_' are not allowed ('{name}'). Rename it without the "
                f"leading underscore, e.g. '{name.lstrip('_') or 'value'}'"
            )
        self._add(node, text)

    def _resolve_pending(self) -> None:
        """Decide the names whose verdict depended on what the whole script binds."""
        bound = self.bound
        for node in self.pending_loads:
            nid = node.id
            if nid[0] == "_" and nid != "_":
                self._add(node, _underscore_name_message(nid))
            elif nid not in bound:
                self._add(
                    node,
                    f"name '{nid}' is not defined in the sandbox. Use only the tools, the safe "
                    "built-ins, the modules json, time, math, re and datetime, and variables "
                    "you assign yourself",
                )
        for node in self.pending_calls:
            nid = node.id
            if nid[0] == "_" and nid != "_":
                self._add(node, _underscore_name_message(nid))
            elif nid not in bound:
                self._add(
                    node,
                    f"call to '{nid}' is not allowed: it is not a tool, a safe built-in or a "
                    "function defined in this script. Call only the tools listed above, the "
                    "safe built-ins, or functions you define with def",
                )

    # --- attributes --------------------------------------------------------------------------

    def _bad_attribute(self, node: ast.Attribute, attr: str) -> None:
        """Report an underscore, internal or unchecked-format attribute."""
        if attr in ("format", "format_map"):
            self._add(
                node,
                "'.format' may only be called directly on a string literal with plain fields "
                "like '{}' or '{name}'. Use an f-string instead, e.g. f\"{value}\"",
            )
        elif attr[0] == "_":
            self._add(
                node,
                f"attribute '{attr}' is not allowed: names starting with '_' are interpreter "
                "internals. Use public methods, dict keys, or isinstance(value, dict) to test "
                "types",
            )
        else:
            self._add(
                node,
                f"attribute '{attr}' is forbidden: it reaches interpreter internals (frames, "
                "code, tracebacks). Work with the values your script computes instead",
            )

    def _module_attribute(self, node: ast.Attribute, module: str, attr: str) -> None:
        """Allow only the listed public attributes of a pre-imported module."""
        allowed = PREIMPORTED_MODULES[module]
        if attr not in allowed:
            self._add(
                node,
                f"'{module}.{attr}' is not available in the sandbox. From {module} you may use: "
                f"{', '.join(sorted(allowed))}",
            )

    def _format_call(self, func: ast.Attribute) -> None:
        """Allow `'literal'.format(...)` only when every field is a plain name or index."""
        value = func.value
        if type(value) is not ast.Constant or type(value.value) is not str:
            self._bad_attribute(func, "format")
            return
        problem = format_field_problem(value.value)
        if problem is not None:
            self._add(
                func,
                f"the format string field '{problem}' reaches into attributes or items, which "
                "is not allowed. Use plain fields like {} or {name}, or an f-string",
            )

    # --- statements and scopes ---------------------------------------------------------------

    def _function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, push: _Push, extend: _Extend
    ) -> None:
        """Check a def: its name, decorators, parameters, annotations and body."""
        if node.name in self.ctx.reserved or node.name[0] == "_":
            self._bad_binding(node, node.name)
        else:
            self.bound.add(node.name)
        if node.decorator_list:
            self._add(
                node.decorator_list[0],
                "decorators are not supported in sandbox scripts; rewrite by removing the "
                "@decorator and calling functions explicitly",
            )
            extend(node.decorator_list)
        self._arguments(node.args, push, extend)
        if node.returns is not None:
            push(node.returns)
        extend(node.body)

    def _async_function(self, node: ast.AsyncFunctionDef, push: _Push, extend: _Extend) -> None:
        """Refuse an async def, then check it like a def to report what else is wrong."""
        self._add(node, _UNSUPPORTED[ast.AsyncFunctionDef])
        self._function(node, push, extend)

    def _class(self, node: ast.ClassDef, push: _Push, extend: _Extend) -> None:
        """Refuse a class, then check what it contains."""
        self._add(node, _UNSUPPORTED[ast.ClassDef])
        if node.name in self.ctx.reserved or node.name[0] == "_":
            self._bad_binding(node, node.name)
        else:
            self.bound.add(node.name)
        extend(node.decorator_list)
        extend(node.bases)
        extend(node.keywords)
        extend(node.body)

    def _lambda(self, node: ast.Lambda, push: _Push, extend: _Extend) -> None:
        """Check a lambda's parameters and body."""
        self._arguments(node.args, push, extend)
        push(node.body)

    def _arguments(self, args: ast.arguments, push: _Push, extend: _Extend) -> None:
        """Bind parameter names and queue defaults and annotations."""
        reserved = self.ctx.reserved
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        if args.vararg is not None:
            params.append(args.vararg)
        if args.kwarg is not None:
            params.append(args.kwarg)
        for param in params:
            if param.arg in reserved or param.arg[0] == "_":
                self._bad_binding(param, param.arg)
            else:
                self.bound.add(param.arg)
            if param.annotation is not None:
                push(param.annotation)
        extend(args.defaults)
        extend(args.kw_defaults)

    def _comprehension(self, node: ast.comprehension, push: _Push, extend: _Extend) -> None:
        """Check one `for ... in ... if ...` clause of a comprehension."""
        if node.is_async:
            self._add(
                node.target,
                "async comprehensions are not supported in sandbox scripts; rewrite using a "
                "plain comprehension",
            )
        push(node.target)
        push(node.iter)
        extend(node.ifs)

    def _handler(self, node: ast.ExceptHandler, push: _Push, extend: _Extend) -> None:
        """Check an except clause, including the name it binds."""
        if node.name is not None:
            if node.name in self.ctx.reserved or node.name[0] == "_":
                self._bad_binding(node, node.name)
            else:
                self.bound.add(node.name)
        if node.type is not None:
            push(node.type)
        extend(node.body)

    def _import(self, node: ast.Import | ast.ImportFrom, push: _Push, extend: _Extend) -> None:
        """Refuse every import; nothing inside one needs checking."""
        self._add(node, _IMPORT_MESSAGE)

    def _unsupported(self, node: ast.AST, push: _Push) -> None:
        """Report syntax outside the allowed subset, then keep checking what it contains."""
        t = type(node)
        if isinstance(node, _INERT):
            return
        text = _UNSUPPORTED.get(t)
        if text is None:
            text = (
                f"{t.__name__} syntax is not supported in sandbox scripts; rewrite using plain "
                "statements, functions, loops and comprehensions"
            )
        if isinstance(node, ast.stmt | ast.expr):
            self._add(node, text)
        if t is ast.Match:
            # Patterns are not expressions (a class pattern reads attributes by keyword); the
            # statement is already refused, so only look inside the subject and the bodies.
            push(node.subject)
            for case in node.cases:
                # Bind the capture names so the bodies are not reported as using undefined
                # names on top of the one violation that matters.
                for pattern in ast.walk(case.pattern):
                    captured = getattr(pattern, "name", None) or getattr(pattern, "rest", None)
                    if isinstance(captured, str):
                        self.bound.add(captured)
                if case.guard is not None:
                    push(case.guard)
                for stmt in case.body:
                    push(stmt)
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.withitem):
                push(child.context_expr)
                if child.optional_vars is not None:
                    push(child.optional_vars)
            elif not isinstance(child, ast.alias | ast.pattern | ast.match_case):
                push(child)


def _forbidden_hint(name: str) -> str:
    """Say what to do instead of calling a forbidden builtin."""
    return _FORBIDDEN_HINTS.get(name, _FORBIDDEN_DEFAULT_HINT)


def _module_value_message(module: str) -> str:
    """Explain that a pre-imported module is reachable only through its listed attributes."""
    example = _MODULE_EXAMPLES.get(module) or sorted(PREIMPORTED_MODULES[module])[0]
    return (
        f"module '{module}' cannot be used on its own, only through its functions. "
        f"Call them directly, e.g. {module}.{example}(...)"
    )


_MODULE_EXAMPLES: dict[str, str] = {
    "json": "dumps",
    "time": "time",
    "math": "sqrt",
    "re": "findall",
    "datetime": "datetime.now",
}


def _call_only_example(name: str) -> str:
    """Give a correct call of a call-only builtin."""
    return {
        "getattr": "getattr(obj, 'name', None)",
        "hasattr": "hasattr(obj, 'name')",
        "type": "type(value) is dict",
    }[name]


def _underscore_name_message(name: str) -> str:
    """Explain that names starting with an underscore are off limits."""
    return (
        f"name '{name}' is not allowed: names starting with '_' are interpreter internals. "
        "Use the tools, the safe built-ins and your own variables instead"
    )
