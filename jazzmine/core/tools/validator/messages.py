"""The validator's words: every violation text, in one place, and how a violation is written.

An LLM reads these texts and rewrites its script from them, so each says what is wrong and
how to fix the line. The checks decide; this module only words what they decided. A text
carries no `Line N: ` prefix and may leave out its closing full stop: `violation` adds the
prefix, and the full stop only where the text does not already end with one.

The exact texts are pinned by tests/core/tools/test_validator_messages.py.
"""

from __future__ import annotations

import ast

from jazzmine.core.tools.safety import PREIMPORTED_MODULES


def violation(line: int, text: str) -> str:
    """Write one violation the way every caller parses it: `Line N: text.`"""
    return f"Line {line}: {text}" if text.endswith(".") else f"Line {line}: {text}."


_MODULES_SENTENCE = "the modules json, time, math, re and datetime are already imported"

# --- whole-script refusals (before or instead of the walk) ----------------------------------


def not_text(script: object) -> str:
    return (
        f"the script must be text, got {type(script).__name__}. Send the script body as a string."
    )


def too_long(length: int, limit: int) -> str:
    return (
        f"the script is {length} characters long; the limit is {limit}. "
        "Write a shorter script that lets the tools do the heavy work."
    )


EMPTY = (
    "the script is empty, so it never calls emit_result or emit_intermediate. "
    "Write a script body that calls the tools and ends with emit_result(<your answer>)."
)
NUL_BYTE = "the script contains a NUL byte. Remove it; scripts are plain text."


def coding_cookie(encoding: str) -> str:
    return (
        f"the encoding declaration '{encoding}' is not allowed. "
        "Remove the '# coding:' comment; scripts are always UTF-8."
    )


def syntax_error(msg: str) -> str:
    return f"syntax error: {msg}. Fix the Python syntax on that line."


TOO_DEEP = (
    "the script is too deeply nested to analyse. "
    "Split long or nested expressions into several statements with variables."
)


def not_unicode(error: ValueError) -> str:
    return f"the script is not valid text ({error}). Use plain UTF-8 text."


def not_analysed(error: Exception) -> str:
    return (
        f"the script could not be analysed ({type(error).__name__}). "
        "Rewrite it as shorter, simpler plain Python."
    )


UNPRODUCTIVE = (
    "the script never calls emit_result or emit_intermediate, so it would "
    "produce nothing (unproductive). End it with emit_result(<your answer>)"
)

# --- names used as values or called -------------------------------------------------------

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


def _forbidden_hint(name: str) -> str:
    """Say what to do instead of calling a forbidden builtin."""
    return _FORBIDDEN_HINTS.get(name, _FORBIDDEN_DEFAULT_HINT)


def forbidden_use(name: str) -> str:
    return f"use of '{name}' is forbidden. {_forbidden_hint(name)}"


def forbidden_call(name: str) -> str:
    return f"call to '{name}' is forbidden. {_forbidden_hint(name)}"


def tool_not_called(name: str) -> str:
    return (
        f"tool '{name}' is used without calling it. Call it with parentheses and its "
        f"arguments, e.g. result = {name}(...), and use the result"
    )


def helper_not_called(name: str) -> str:
    return f"'{name}' is used without calling it. Call it with parentheses, e.g. {name}(value)"


_MODULE_EXAMPLES: dict[str, str] = {
    "json": "dumps",
    "time": "time",
    "math": "sqrt",
    "re": "findall",
    "datetime": "datetime.now",
}


def module_value(module: str) -> str:
    """Explain that a pre-imported module is reachable only through its listed attributes."""
    example = _MODULE_EXAMPLES.get(module) or sorted(PREIMPORTED_MODULES[module])[0]
    return (
        f"module '{module}' cannot be used on its own, only through its functions. "
        f"Call them directly, e.g. {module}.{example}(...)"
    )


def _call_only_example(name: str) -> str:
    """Give a correct call of a call-only builtin."""
    return {
        "getattr": "getattr(obj, 'name', None)",
        "hasattr": "hasattr(obj, 'name')",
        "type": "type(value) is dict",
    }[name]


def call_only_value(name: str) -> str:
    return (
        f"'{name}' may only be called directly, not passed around or stored. "
        f"Call it where you need it, e.g. {_call_only_example(name)}"
    )


TYPE_ARITY = (
    "type(...) is only allowed with exactly one argument. To test a type, "
    "use isinstance(value, dict) or type(value) is dict"
)


def call_only_shape(name: str) -> str:
    return (
        f"{name}(...) needs an object and a quoted attribute name, e.g. {_call_only_example(name)}"
    )


def call_only_computed(name: str) -> str:
    return (
        f"{name}(...) with a computed attribute name is not allowed. Write the name as "
        f"a quoted literal, e.g. {_call_only_example(name)}, or use a dict and d[key]"
    )


def call_only_denied(name: str, attribute: str) -> str:
    return (
        f"{name}(...) with the attribute name '{attribute}' is not allowed: it reaches "
        "interpreter internals. Use the object's public methods and dict keys instead"
    )


def underscore_name(name: str) -> str:
    """Explain that names starting with an underscore are off limits."""
    return (
        f"name '{name}' is not allowed: names starting with '_' are interpreter internals. "
        "Use the tools, the safe built-ins and your own variables instead"
    )


def undefined_name(name: str) -> str:
    return (
        f"name '{name}' is not defined in the sandbox. Use only the tools, the safe "
        "built-ins, the modules json, time, math, re and datetime, and variables "
        "you assign yourself"
    )


def undefined_call(name: str) -> str:
    return (
        f"call to '{name}' is not allowed: it is not a tool, a safe built-in or a "
        "function defined in this script. Call only the tools listed above, the "
        "safe built-ins, or functions you define with def"
    )


# --- names a script binds -----------------------------------------------------------------


def tool_bound(name: str) -> str:
    return (
        f"'{name}' is a tool and cannot be assigned, redefined or deleted. Store its "
        f"result under another name, e.g. {name}_result = {name}(...)"
    )


def helper_bound(name: str) -> str:
    return (
        f"'{name}' is a framework helper and cannot be assigned, redefined or deleted. "
        f"Just call {name}(...)"
    )


def module_bound(name: str) -> str:
    return (
        f"'{name}' is a pre-imported module and cannot be assigned, redefined or "
        f"deleted. Use another variable name, e.g. {name}_value"
    )


def builtin_bound(name: str) -> str:
    return (
        f"'{name}' is a built-in name and cannot be assigned, redefined or deleted. "
        f"Use another variable name, e.g. {name}_value"
    )


def underscore_bound(name: str) -> str:
    return (
        f"names starting with '_' are not allowed ('{name}'). Rename it without the "
        f"leading underscore, e.g. '{name.lstrip('_') or 'value'}'"
    )


# --- attributes ---------------------------------------------------------------------------


def attribute_stored(attribute: str) -> str:
    return (
        f"assigning to or deleting attribute '{attribute}' is not supported in "
        "sandbox scripts. Keep the value in a variable or a dict key instead"
    )


UNCHECKED_FORMAT = (
    "'.format' may only be called directly on a string literal with plain fields "
    "like '{}' or '{name}'. Use an f-string instead, e.g. f\"{value}\""
)


def underscore_attribute(attribute: str) -> str:
    return (
        f"attribute '{attribute}' is not allowed: names starting with '_' are interpreter "
        "internals. Use public methods, dict keys, or isinstance(value, dict) to test "
        "types"
    )


def forbidden_attribute(attribute: str) -> str:
    return (
        f"attribute '{attribute}' is forbidden: it reaches interpreter internals (frames, "
        "code, tracebacks). Work with the values your script computes instead"
    )


def module_attribute(module: str, attribute: str, allowed: frozenset[str]) -> str:
    return (
        f"'{module}.{attribute}' is not available in the sandbox. From {module} you may use: "
        f"{', '.join(sorted(allowed))}"
    )


def format_field(field: str) -> str:
    return (
        f"the format string field '{field}' reaches into attributes or items, which "
        "is not allowed. Use plain fields like {} or {name}, or an f-string"
    )


# --- syntax outside the allowed subset ------------------------------------------------------

IMPORT = (
    f"import statements are not allowed. {_MODULES_SENTENCE.capitalize()}: use them directly "
    "(e.g. json.dumps(...), math.sqrt(...)) and delete the import"
)
DECORATOR = (
    "decorators are not supported in sandbox scripts; rewrite by removing the "
    "@decorator and calling functions explicitly"
)
ASYNC_COMPREHENSION = (
    "async comprehensions are not supported in sandbox scripts; rewrite using a plain comprehension"
)

# Syntax with a rewrite hint of its own; any other refused node gets `unsupported`'s default.
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


def unsupported(node_type: type) -> str:
    """Name the refused syntax and how to rewrite it."""
    text = _UNSUPPORTED.get(node_type)
    if text is None:
        text = (
            f"{node_type.__name__} syntax is not supported in sandbox scripts; rewrite using "
            "plain statements, functions, loops and comprehensions"
        )
    return text
