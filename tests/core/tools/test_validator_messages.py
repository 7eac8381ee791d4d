"""The validator's exact words: every message it can give, pinned as whole violation lists.

The rule-by-rule tests check fragments; these pin every text, its line, its order within a
line and the deduplicated, line-sorted list, so a change to the wording (which LLMs and the
playground read) or to the walk's order is a deliberate edit here, never a side effect.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jazzmine.core.tools.validator import MAX_SCRIPT_CHARS, validate_script

TOOLS = ("get_orders", "get_user", "search_products", "update_order", "send_email")

UNPRODUCTIVE = (
    "the script never calls emit_result or emit_intermediate, so it would produce nothing "
    "(unproductive). End it with emit_result(<your answer>)."
)
EMPTY = (
    "Line 1: the script is empty, so it never calls emit_result or emit_intermediate. "
    "Write a script body that calls the tools and ends with emit_result(<your answer>)."
)
NESTED = (
    "Line 1: the script is too deeply nested to analyse. "
    "Split long or nested expressions into several statements with variables."
)
IMPORT = (
    "import statements are not allowed. The modules json, time, math, re and datetime are "
    "already imported: use them directly (e.g. json.dumps(...), math.sqrt(...)) and delete the "
    "import."
)


def undefined(name: str) -> str:
    return (
        f"name '{name}' is not defined in the sandbox. Use only the tools, the safe built-ins, "
        "the modules json, time, math, re and datetime, and variables you assign yourself."
    )


def underscore(name: str) -> str:
    return (
        f"name '{name}' is not allowed: names starting with '_' are interpreter internals. "
        "Use the tools, the safe built-ins and your own variables instead."
    )


def module_value(module: str, example: str) -> str:
    return (
        f"module '{module}' cannot be used on its own, only through its functions. "
        f"Call them directly, e.g. {module}.{example}(...)."
    )


def builtin_bound(name: str) -> str:
    return (
        f"'{name}' is a built-in name and cannot be assigned, redefined or deleted. "
        f"Use another variable name, e.g. {name}_value."
    )


def underscore_bound(name: str, suggestion: str) -> str:
    return (
        f"names starting with '_' are not allowed ('{name}'). Rename it without the leading "
        f"underscore, e.g. '{suggestion}'."
    )


def attribute_set(attr: str) -> str:
    return (
        f"assigning to or deleting attribute '{attr}' is not supported in sandbox scripts. "
        "Keep the value in a variable or a dict key instead."
    )


FORMAT = (
    "'.format' may only be called directly on a string literal with plain fields like '{}' "
    "or '{name}'. Use an f-string instead, e.g. f\"{value}\"."
)


def test_names_loaded_and_called() -> None:
    script = (
        "f = eval\n"
        "x = get_orders\n"
        "y = emit_result\n"
        "z = json\n"
        "g = getattr\n"
        "open('f')\n"
        "math()\n"
        "print(_secret, undefined_name)\n"
        "_hidden()\n"
        "unknown()\n"
    )
    assert validate_script(script, TOOLS) == [
        "Line 1: use of 'eval' is forbidden. Running code built from strings is not allowed; "
        "write the logic directly.",
        f"Line 1: {UNPRODUCTIVE}",
        "Line 2: tool 'get_orders' is used without calling it. Call it with parentheses and its "
        "arguments, e.g. result = get_orders(...), and use the result.",
        "Line 3: 'emit_result' is used without calling it. Call it with parentheses, e.g. "
        "emit_result(value).",
        f"Line 4: {module_value('json', 'dumps')}",
        "Line 5: 'getattr' may only be called directly, not passed around or stored. Call it "
        "where you need it, e.g. getattr(obj, 'name', None).",
        "Line 6: call to 'open' is forbidden. Files are not available in the sandbox; get data "
        "from the tools instead.",
        f"Line 7: {module_value('math', 'sqrt')}",
        f"Line 8: {undefined('undefined_name')}",
        f"Line 8: {underscore('_secret')}",
        f"Line 9: {underscore('_hidden')}",
        "Line 10: call to 'unknown' is not allowed: it is not a tool, a safe built-in or a "
        "function defined in this script. Call only the tools listed above, the safe built-ins, "
        "or functions you define with def.",
    ]


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        (
            "exit",
            "To finish early, call emit_result(...) with what you have and let the script end.",
        ),
        (
            "input",
            "Nobody can type input into the sandbox; get data from the tools or use literals.",
        ),
        ("breakpoint", "There is no interactive debugger; report progress with emit_log(...)."),
        ("help", "There is no interactive help; the tools are documented in the prompt."),
        ("vars", "Introspection is not available; refer to your variables and dict keys by name."),
        ("setattr", "Keep values in variables or dict keys instead of setting attributes."),
        ("delattr", "Keep values in variables or dict keys instead of deleting attributes."),
        (
            "__import__",
            "Imports are not allowed; the modules json, time, math, re and datetime are already "
            "imported, use them directly.",
        ),
        (
            "super",
            "It is not available in sandbox scripts; use the tools, the safe built-ins and plain "
            "Python.",
        ),
    ],
)
def test_forbidden_calls_say_what_to_do_instead(name: str, hint: str) -> None:
    assert validate_script(f"{name}()\nemit_result(1)\n", TOOLS) == [
        f"Line 1: call to '{name}' is forbidden. {hint}"
    ]


def test_call_only_builtins() -> None:
    script = (
        "type(1, 2)\ngetattr(x)\ngetattr(x, name)\nhasattr(x, '__class__')\nemit_log('progress')\n"
    )
    assert validate_script(script, TOOLS) == [
        "Line 1: type(...) is only allowed with exactly one argument. To test a type, use "
        "isinstance(value, dict) or type(value) is dict.",
        f"Line 1: {UNPRODUCTIVE}",
        "Line 2: getattr(...) needs an object and a quoted attribute name, e.g. "
        "getattr(obj, 'name', None).",
        f"Line 2: {undefined('x')}",
        "Line 3: getattr(...) with a computed attribute name is not allowed. Write the name as a "
        "quoted literal, e.g. getattr(obj, 'name', None), or use a dict and d[key].",
        f"Line 3: {undefined('name')}",
        f"Line 3: {undefined('x')}",
        "Line 4: hasattr(...) with the attribute name '__class__' is not allowed: it reaches "
        "interpreter internals. Use the object's public methods and dict keys instead.",
        f"Line 4: {undefined('x')}",
    ]


def test_bindings() -> None:
    script = (
        "get_user = 1\n"
        "emit_result = 2\n"
        "json = 3\n"
        "len = 4\n"
        "_private = 5\n"
        "__ = 6\n"
        "def exec(): pass\n"
        "for _ in range(3): pass\n"
        "try:\n    pass\nexcept Exception as _err:\n    pass\n"
        "f = lambda str: str\n"
        "class print: pass\n"
        "emit_intermediate(1)\n"
    )
    assert validate_script(script, TOOLS) == [
        "Line 1: 'get_user' is a tool and cannot be assigned, redefined or deleted. Store its "
        "result under another name, e.g. get_user_result = get_user(...).",
        "Line 2: 'emit_result' is a framework helper and cannot be assigned, redefined or "
        "deleted. Just call emit_result(...).",
        "Line 3: 'json' is a pre-imported module and cannot be assigned, redefined or deleted. "
        "Use another variable name, e.g. json_value.",
        f"Line 4: {builtin_bound('len')}",
        f"Line 5: {underscore_bound('_private', 'private')}",
        f"Line 6: {underscore_bound('__', 'value')}",
        f"Line 7: {builtin_bound('exec')}",
        f"Line 11: {underscore_bound('_err', 'err')}",
        f"Line 13: {builtin_bound('str')}",
        "Line 14: class definitions are not supported in sandbox scripts; rewrite using "
        "functions and dicts.",
        f"Line 14: {builtin_bound('print')}",
    ]


def test_attributes() -> None:
    script = (
        "x = get_user().data\n"
        "x.field = 1\n"
        "del x.other\n"
        "y = x.__class__\n"
        "z = x.gi_frame\n"
        "w = x.format\n"
        "'{0.real}'.format(1)\n"
        "name.format(1)\n"
        "os.path.join('a')\n"
        "json.loads2('x')\n"
        "t = datetime.datetime.now().isoformat()\n"
        "emit_result(t)\n"
    )
    assert validate_script(script, TOOLS) == [
        f"Line 2: {attribute_set('field')}",
        f"Line 3: {attribute_set('other')}",
        "Line 4: attribute '__class__' is not allowed: names starting with '_' are interpreter "
        "internals. Use public methods, dict keys, or isinstance(value, dict) to test types.",
        "Line 5: attribute 'gi_frame' is forbidden: it reaches interpreter internals (frames, "
        "code, tracebacks). Work with the values your script computes instead.",
        f"Line 6: {FORMAT}",
        "Line 7: the format string field '0.real' reaches into attributes or items, which is not "
        "allowed. Use plain fields like {} or {name}, or an f-string.",
        f"Line 8: {FORMAT}",
        f"Line 8: {undefined('name')}",
        f"Line 9: {undefined('os')}",
        "Line 10: 'json.loads2' is not available in the sandbox. From json you may use: "
        "JSONDecodeError, dumps, loads.",
    ]


def test_unsupported_syntax() -> None:
    script = (
        "import os\n"
        "from sys import path\n"
        "@decorator\n"
        "def f(): pass\n"
        "class C: pass\n"
        "async def g():\n"
        "    await g()\n"
        "    async for a in b: pass\n"
        "    async with c: pass\n"
        "    return [x async for x in y]\n"
        "with open('f') as fh: pass\n"
        "def h():\n"
        "    global q\n"
        "    nonlocal r\n"
        "    yield 1\n"
        "    yield from h()\n"
        "match v:\n"
        "    case {'k': captured} if captured:\n"
        "        emit_result(captured)\n"
        "try:\n"
        "    pass\n"
        "except* ValueError:\n"
        "    pass\n"
    )
    assert validate_script(script, TOOLS) == [
        f"Line 1: {IMPORT}",
        f"Line 2: {IMPORT}",
        "Line 3: decorators are not supported in sandbox scripts; rewrite by removing the "
        "@decorator and calling functions explicitly.",
        f"Line 3: {undefined('decorator')}",
        "Line 5: class definitions are not supported in sandbox scripts; rewrite using "
        "functions and dicts.",
        "Line 6: async functions are not supported in sandbox scripts; rewrite using a plain def "
        "(tools are called like plain functions, the sandbox runs async tools for you).",
        "Line 7: await is not supported in sandbox scripts; rewrite by calling the tool like a "
        "plain function (the sandbox runs async tools for you).",
        "Line 8: async for is not supported in sandbox scripts; rewrite using a plain for loop.",
        f"Line 8: {undefined('b')}",
        "Line 9: async with is not supported in sandbox scripts; rewrite using plain calls.",
        f"Line 9: {undefined('c')}",
        "Line 10: async comprehensions are not supported in sandbox scripts; rewrite using a "
        "plain comprehension.",
        f"Line 10: {undefined('y')}",
        "Line 11: with statements are not supported in sandbox scripts (no files or context "
        "managers are available); rewrite using plain calls.",
        "Line 11: call to 'open' is forbidden. Files are not available in the sandbox; get data "
        "from the tools instead.",
        "Line 13: global statements are not supported in sandbox scripts; rewrite by passing "
        "values in as arguments and returning results.",
        "Line 14: nonlocal statements are not supported in sandbox scripts; rewrite by passing "
        "values in as arguments and returning results.",
        "Line 15: yield is not supported in sandbox scripts; rewrite by building and returning "
        "a list.",
        "Line 16: yield from is not supported in sandbox scripts; rewrite by building and "
        "returning a list.",
        "Line 17: match statements are not supported in sandbox scripts; rewrite using "
        "if/elif/else.",
        f"Line 17: {undefined('v')}",
        "Line 20: except* is not supported in sandbox scripts; rewrite using plain try/except.",
    ]


class FailingTools:
    """A tool list that breaks while it is read: the validator must still answer."""

    def __iter__(self) -> Iterator[str]:
        yield "get_user"
        raise ValueError("broken")


@pytest.mark.parametrize(
    ("script", "tools", "expected"),
    [
        (
            b"emit_result(1)",
            TOOLS,
            "Line 1: the script must be text, got bytes. Send the script body as a string.",
        ),
        (
            "x = 1\n" * (MAX_SCRIPT_CHARS // 6 + 1),
            TOOLS,
            "Line 1: the script is 200004 characters long; the limit is 200000. Write a shorter "
            "script that lets the tools do the heavy work.",
        ),
        (" \n\t\n", TOOLS, EMPTY),
        ("# only a comment\n", TOOLS, EMPTY),
        (
            "emit_result(1)\nx = 1\x00\n",
            TOOLS,
            "Line 2: the script contains a NUL byte. Remove it; scripts are plain text.",
        ),
        (
            "#!/bin/python\n# -*- coding: utf_7 -*-\nemit_result(1)\n",
            TOOLS,
            "Line 2: the encoding declaration 'utf_7' is not allowed. Remove the '# coding:' "
            "comment; scripts are always UTF-8.",
        ),
        (
            "x = 1\nif x\n    emit_result(x)\n",
            TOOLS,
            "Line 2: syntax error: expected ':'. Fix the Python syntax on that line.",
        ),
        ("x = " + "-" * 150_000 + "1\nemit_result(x)\n", TOOLS, NESTED),
        (
            "x = '\ud800'\nemit_result(x)",
            TOOLS,
            "Line 1: the script is not valid text ('utf-8' codec can't encode character "
            "'\\ud800' in position 5: surrogates not allowed). Use plain UTF-8 text.",
        ),
        (
            "emit_result(get_user())",
            FailingTools(),
            "Line 1: the script could not be analysed (ValueError). Rewrite it as shorter, "
            "simpler plain Python.",
        ),
    ],
    ids=[
        "bytes",
        "size",
        "blank",
        "comment",
        "nul",
        "cookie",
        "syntax",
        "nested",
        "surrogate",
        "crash",
    ],
)
def test_whole_script_refusals(script: object, tools: object, expected: str) -> None:
    assert validate_script(script, tools) == [expected]  # type: ignore[arg-type]
