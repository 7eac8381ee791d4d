"""Rule-by-rule tests of the static validator for LLM-written scripts."""

from __future__ import annotations

import re

import pytest

from jazzmine.core.tools.safety import PREIMPORTED_MODULES, SAFE_BUILTINS
from jazzmine.core.tools.validator import FORBIDDEN_CALLS, MAX_SCRIPT_CHARS, validate_script

TOOLS = ("get_orders", "get_user", "search_products", "update_order", "send_email")
LINE = re.compile(r"^Line \d+: .+[.;] [A-Za-z].+\.$")  # "what is wrong. how to fix it."


def check(body: str, tools: tuple[str, ...] = TOOLS) -> list[str]:
    """Validate a body that already ends with an emit call unless the test says otherwise."""
    return validate_script(body, tools)


def ok(body: str) -> list[str]:
    """Validate `body` followed by a result, so only the rule under test can fire."""
    return check(body + "\nemit_result(1)\n")


def assert_clean(body: str) -> None:
    assert ok(body) == []


def assert_flags(body: str, *fragments: str) -> list[str]:
    violations = ok(body)
    assert violations, f"expected a violation for {body!r}"
    text = "\n".join(violations)
    for fragment in fragments:
        assert fragment in text, f"{fragment!r} not in {violations}"
    return violations


# --- the seed's rules -------------------------------------------------------------------------


def test_it_accepts_the_seeds_example_script() -> None:
    body = (
        "items = get_orders().data['orders']\n"
        "total = sum(i['price'] for i in items)\n"
        "emit_result({'total': total})\n"
    )
    assert check(body) == []


def test_it_rejects_a_script_with_open() -> None:
    assert ok("data = open('/etc/passwd').read()") == [
        "Line 1: call to 'open' is forbidden. "
        "Files are not available in the sandbox; get data from the tools instead."
    ]


@pytest.mark.parametrize("name", ["exec", "eval", "compile", "open", "__import__", "exit", "input"])
def test_it_rejects_every_call_the_seed_forbids(name: str) -> None:
    assert_flags(f"{name}('x')", f"call to '{name}' is forbidden")


def test_it_exposes_the_seeds_forbidden_calls_and_more() -> None:
    seed = {"exec", "eval", "compile", "open", "__import__", "exit", "input"}
    assert seed < FORBIDDEN_CALLS
    assert {"breakpoint", "globals", "vars", "dir", "setattr", "object", "super"} <= FORBIDDEN_CALLS


def test_it_rejects_import_and_names_the_preimported_modules() -> None:
    (violation,) = ok("import os")
    assert violation.startswith("Line 1: import statements are not allowed.")
    for module in ("json", "time", "math", "re", "datetime"):
        assert module in violation


def test_it_rejects_from_import() -> None:
    assert_flags("from subprocess import run", "Line 1: import statements are not allowed")


def test_it_rejects_a_tool_assigned_without_parentheses() -> None:
    assert_flags("r = get_user", "tool 'get_user' is used without calling it", "get_user(...)")


def test_it_rejects_a_tool_in_a_list_or_passed_as_an_argument() -> None:
    assert_flags("x = [get_user]", "tool 'get_user' is used without calling it")
    assert_flags("x = list(map(get_user, [1]))", "tool 'get_user' is used without calling it")


def test_it_accepts_a_tool_that_is_called() -> None:
    assert_clean("r = get_user(user_id=1)")


def test_it_rejects_an_unproductive_script() -> None:
    (violation,) = check("x = get_orders()\n")
    assert violation.startswith("Line 1: ")
    assert "unproductive" in violation and "emit_result" in violation


def test_it_counts_emit_intermediate_as_productive_but_not_emit_log() -> None:
    assert check("emit_intermediate({'step': 1})\n") == []
    assert "unproductive" in check("emit_log('hi')\n")[0]


def test_it_reports_a_syntax_error_with_its_line() -> None:
    (violation,) = check("x = 1\nif x\n    emit_result(x)\n")
    assert violation.startswith("Line 2: syntax error:")


def test_it_reports_an_indentation_error() -> None:
    (violation,) = check("if True:\nemit_result(1)\n")
    assert violation.startswith("Line 2: syntax error:")


@pytest.mark.parametrize("script", ["", "   ", "\n\n\t\n", "# only a comment\n# and another\n"])
def test_it_rejects_an_empty_script_as_producing_nothing(script: str) -> None:
    (violation,) = check(script)
    assert violation.startswith("Line 1: the script is empty")
    assert "emit_result" in violation


# --- names ------------------------------------------------------------------------------------


def test_it_rejects_a_call_to_an_unknown_name() -> None:
    assert_flags("x = fetch_everything()", "call to 'fetch_everything' is not allowed")


def test_it_rejects_a_load_of_an_unknown_name() -> None:
    assert_flags("x = os.environ", "name 'os' is not defined in the sandbox")


def test_it_allows_calling_functions_and_lambdas_the_script_defines() -> None:
    assert_clean("def double(x):\n    return 2 * x\nhalf = lambda x: x / 2\ny = half(double(4))")


def test_it_allows_calling_a_local_alias_of_a_safe_builtin() -> None:
    assert_clean("order = sorted\nx = order([3, 1])")


def test_it_rejects_storing_a_forbidden_builtin_to_call_it_later() -> None:
    assert_flags("run = eval\nrun('1')", "use of 'eval' is forbidden")


def test_it_rejects_a_builtin_shadowed_in_one_scope_and_called_in_another() -> None:
    violations = assert_flags(
        "def setup():\n    open = 1\n    return open\nopen('/etc/passwd')",
        "'open' is a built-in name and cannot be assigned",
        "call to 'open' is forbidden",
    )
    assert violations[0].startswith("Line 2:")


def test_it_sees_through_unicode_normalised_identifiers() -> None:
    # The parser applies NFKC: fullwidth and mathematical letters become plain ASCII names.
    assert_flags("ｅｖａｌ('1')", "call to 'eval' is forbidden")
    assert_flags("𝘰𝘱𝘦𝘯('x')", "call to 'open' is forbidden")
    assert_flags("x = ().__𝘤𝘭𝘢𝘴𝘴__", "attribute '__class__'")


@pytest.mark.parametrize("name", ["__builtins__", "__name__", "__loader__", "_private"])
def test_it_rejects_names_starting_with_an_underscore(name: str) -> None:
    assert_flags(f"x = {name}", f"name '{name}' is not allowed")


def test_it_allows_a_bare_underscore_as_a_throwaway_variable() -> None:
    assert_clean("for _ in range(3):\n    pass\nfirst, _ = (1, 2)")


@pytest.mark.parametrize("name", sorted(SAFE_BUILTINS - {"getattr", "hasattr", "type"}))
def test_it_allows_every_safe_builtin_as_a_value(name: str) -> None:
    assert_clean(f"f = {name}")


# --- rebinding --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "print = emit_log",
        "def emit_result(x):\n    pass",
        "json = None",
        "for len in range(3):\n    pass",
        "try:\n    pass\nexcept KeyError as json:\n    pass",
        "f = lambda emit_log: 1",
        "if (get_user := 1):\n    pass",
        "del emit_log",
        "x = [0 for sorted in range(3)]",
        "a, *time = [1, 2]",
        "def f(math):\n    return math",
        "def f(*, datetime=1):\n    return 1",
        "def f(**ToolResponse):\n    return 1",
        "id = 5",
        "type = 'order'",
        "x: int = 1\nopen: int = 2",
    ],
)
def test_it_rejects_rebinding_reserved_names_in_every_binding_form(body: str) -> None:
    assert_flags(body, "cannot be assigned, redefined or deleted")


def test_it_suggests_a_new_name_when_a_tool_name_is_reused() -> None:
    assert_flags("get_user = 1", "get_user_result = get_user(...)")


def test_it_rejects_binding_an_underscore_prefixed_name() -> None:
    assert_flags("_cache = {}", "names starting with '_' are not allowed", "'cache'")


def test_it_allows_deleting_script_variables_and_dict_keys() -> None:
    assert_clean("x = 1\nd = {'a': 1}\ndel x\ndel d['a']")


# --- attributes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr",
    [
        "().__class__",
        "(1).__class__.__bases__",
        "emit_result.__globals__",
        "ToolResponse.__init__.__globals__",
        "print.__self__",
        "x.__dict__",
        "x._private",
        "datetime.datetime.now().__class__",
    ],
)
def test_it_rejects_attributes_starting_with_an_underscore(expr: str) -> None:
    assert_flags(f"x = 1\ny = {expr}", "names starting with '_' are interpreter internals")


@pytest.mark.parametrize(
    "attr", ["gi_frame", "f_back", "f_globals", "tb_frame", "co_code", "mro", "cr_frame"]
)
def test_it_rejects_forbidden_internal_attributes(attr: str) -> None:
    assert_flags(f"x = 1\ny = x.{attr}", f"attribute '{attr}' is forbidden")


def test_it_rejects_a_generator_frame_walk() -> None:
    assert_flags("g = (x for x in [])\nf = g.gi_frame.f_back.f_globals", "'gi_frame'", "'f_back'")


def test_it_rejects_the_traceback_route_from_a_caught_exception() -> None:
    assert_flags(
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    t = e.with_traceback(None)",
        "attribute 'with_traceback' is forbidden",
    )
    assert_flags(
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    t = e.__traceback__",
        "'__traceback__'",
    )


def test_it_rejects_assigning_to_attributes() -> None:
    assert_flags("json.dumps = lambda *a: 'x'", "assigning to or deleting attribute 'dumps'")
    assert_flags("r = get_user(user_id=1)\nr.data = {}", "attribute 'data'")
    assert_flags("r = get_user(user_id=1)\ndel r.data", "attribute 'data'")


def test_it_allows_public_methods_and_attributes_of_values() -> None:
    assert_clean(
        "r = get_user(user_id=1)\nname = r.data.get('name', '').strip().lower()\n"
        "p = re.compile('a+')\ns = p.pattern\nflags = p.flags"
    )


# --- pre-imported modules ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "attr"),
    [(module, attr) for module, attrs in PREIMPORTED_MODULES.items() for attr in sorted(attrs)],
)
def test_it_allows_every_listed_module_attribute(module: str, attr: str) -> None:
    assert_clean(f"x = {module}.{attr}")


@pytest.mark.parametrize(
    "expr", ["json.decoder", "json.codecs", "re.sre_compile", "re.enum", "time.sys", "math.os"]
)
def test_it_rejects_module_attributes_that_are_not_listed(expr: str) -> None:
    module, attr = expr.split(".")
    assert_flags(f"x = {expr}", f"'{module}.{attr}' is not available in the sandbox")


def test_it_allows_chains_from_a_listed_module_attribute() -> None:
    assert_clean(
        "now = datetime.datetime.now(datetime.timezone.utc)\n"
        "later = now + datetime.timedelta(days=1)\nx = later.isoformat()"
    )


def test_it_rejects_a_module_used_as_a_value() -> None:
    assert_flags("m = json\nx = m.decoder", "module 'json' cannot be used on its own")
    assert_flags("x = json()", "module 'json' cannot be used on its own")


@pytest.mark.parametrize("name", ["os", "sys", "subprocess", "builtins", "importlib"])
def test_it_rejects_modules_that_are_not_preimported(name: str) -> None:
    assert_flags(f"x = {name}.anything", f"name '{name}' is not defined")


# --- getattr, hasattr, type -------------------------------------------------------------------


def test_it_allows_getattr_and_hasattr_with_a_plain_literal_name() -> None:
    assert_clean("x = getattr(1, 'real', None)\ny = hasattr(1, 'imag')")


@pytest.mark.parametrize(
    "call",
    [
        "getattr(x, name)",
        "getattr(x, '__cla' + 'ss__')",
        "getattr(x, '__class__')",
        "getattr(x, 'gi_frame')",
        "getattr(x, 'format')",
        "getattr(x, '')",
        "getattr(x, *names)",
        "getattr(x)",
        "hasattr(x, '__globals__')",
        "hasattr(x, 'a', 'b')",
        "getattr(getattr, '__self__')",
    ],
)
def test_it_rejects_getattr_and_hasattr_with_unsafe_or_computed_names(call: str) -> None:
    assert ok(f"x = 1\nname = 'a'\nnames = ['a']\ny = {call}")


def test_it_rejects_getattr_passed_around_as_a_value() -> None:
    assert_flags("g = getattr", "'getattr' may only be called directly")
    assert_flags("x = list(map(getattr, [1], ['real']))", "'getattr' may only be called directly")


def test_it_allows_type_with_one_argument() -> None:
    assert_clean("x = type(1) is int")


def test_it_rejects_type_with_three_arguments_or_as_a_value() -> None:
    assert_flags("X = type('X', (), {})", "type(...) is only allowed with exactly one argument")
    assert_flags("t = type", "'type' may only be called directly")


# --- format strings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        "'{}'.format(1)",
        "'{0} {1}'.format(1, 2)",
        "'{name}'.format(name='a')",
        "'{:>10.2f}'.format(1.5)",
        "'{0!r:^{1}}'.format('a', 9)",
        "'{{literal braces}} {}'.format(1)",
        "'%(name)s is %(age)d' % {'name': 'a', 'age': 3}",
        "f'{1 + 1:>{4}}'",
    ],
)
def test_it_allows_simple_format_strings(call: str) -> None:
    assert_clean(f"x = {call}")


@pytest.mark.parametrize(
    "call",
    [
        "'{0.__class__}'.format(1)",
        "'{0.real}'.format(1)",
        "'{x[0]}'.format(x=[1])",
        "'{0:{1.__class__}}'.format(1, 2)",
        "'{'.format(1)",
    ],
)
def test_it_rejects_format_fields_that_reach_attributes_or_indexes(call: str) -> None:
    assert_flags(f"x = {call}", "format string field")


@pytest.mark.parametrize(
    "body",
    [
        "t = 'a{}'\nx = t.format(1)",
        "x = str.format('{0.__class__}', 1)",
        "f = '{}'.format",
        "x = f'{1}'.format(2)",
        "x = '{x.__class__}'.format_map({'x': 1})",
    ],
)
def test_it_rejects_format_calls_it_cannot_check(body: str) -> None:
    assert_flags(body, "'.format' may only be called directly on a string literal")


def test_it_checks_expressions_inside_f_strings() -> None:
    assert_flags("x = f'{().__class__}'", "'__class__'")
    assert_flags("x = f'{eval(\"1\")}'", "call to 'eval' is forbidden")


# --- syntax outside the supported subset ------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("class A:\n    pass", "class definitions are not supported"),
        ("@sorted\ndef f():\n    pass", "decorators are not supported"),
        ("def f():\n    global g\n    g = 1", "global statements are not supported"),
        ("def f():\n    x = 1\n    def g():\n        nonlocal x", "nonlocal statements"),
        ("async def f():\n    pass", "async functions are not supported"),
        ("def f():\n    yield 1", "yield is not supported"),
        ("def f():\n    yield from [1]", "yield from is not supported"),
        ("with get_orders() as o:\n    pass", "with statements are not supported"),
        ("match 1:\n    case 1:\n        pass", "match statements are not supported"),
        ("try:\n    pass\nexcept* ValueError:\n    pass", "except* is not supported"),
    ],
)
def test_it_rejects_unsupported_syntax_with_a_rewrite_hint(body: str, fragment: str) -> None:
    violations = assert_flags(body, fragment)
    assert any("rewrite" in v for v in violations)


def test_it_rejects_attribute_capture_in_match_class_patterns() -> None:
    assert_flags("match 1:\n    case int(__class__=c):\n        pass", "match statements")


def test_it_rejects_await_even_where_the_parser_accepts_it() -> None:
    assert_flags("x = await get_orders()", "await is not supported")


def test_it_accepts_the_allowed_constructs() -> None:
    assert_clean(
        "def f(a, /, b=2, *args, c, d=4, **kw):\n"
        "    return a\n"
        "x = [i for i in range(3) if i]\n"
        "y = {i: i for i in x}\n"
        "z = {i for i in x}\n"
        "g = sum(i for i in x)\n"
        "if (n := len(x)) > 1:\n"
        "    pass\n"
        "while n:\n"
        "    n -= 1\n"
        "    if n == 5:\n"
        "        continue\n"
        "    break\n"
        "else:\n"
        "    pass\n"
        "for i in x:\n"
        "    pass\n"
        "else:\n"
        "    pass\n"
        "try:\n"
        "    raise ValueError('x') from None\n"
        "except (ValueError, KeyError) as err:\n"
        "    msg = str(err)\n"
        "finally:\n"
        "    pass\n"
        "assert x, 'empty'\n"
        "s = x[1:2:1]\n"
        "t = f(1, c=3, *x, **y)\n"
        "u = 1 if x else 2\n"
        "v = -n + +n, not x, ~n\n"
        "w = x[0] if x else None\n"
        "big: list = []\n"
    )


# --- reporting --------------------------------------------------------------------------------


def test_every_violation_names_its_line_and_says_how_to_fix_it() -> None:
    violations = ok(
        "import os\nx = open('f')\ny = ().__class__\nz = get_user\nw = '{0.a}'.format(1)\n"
        "class A:\n    pass\nq = getattr(x, y)\nprint = 1"
    )
    assert len(violations) >= 8
    for violation in violations:
        assert LINE.match(violation), violation


def test_it_orders_violations_by_line() -> None:
    violations = ok("a = open('x')\nb = 1\nc = eval('1')\nimport os")
    lines = [int(v.split(":")[0].removeprefix("Line ")) for v in violations]
    assert lines == sorted(lines) == [1, 3, 4]


def test_it_deduplicates_identical_violations() -> None:
    violations = ok("x = open('a') or open('a')")
    assert violations == list(dict.fromkeys(violations))
    assert len(violations) == 1


def test_it_reports_line_numbers_of_the_assembled_script() -> None:
    script = "# Available tools: get_user\n# Helpers: emit_result\nr = get_user\nemit_result(r)\n"
    (violation,) = validate_script(script, ["get_user"])
    assert violation.startswith("Line 3:")


# --- hostile inputs ---------------------------------------------------------------------------


def test_it_rejects_a_nul_byte_with_its_line() -> None:
    (violation,) = check("emit_result(1)\nx = 1\x00\n")
    assert violation.startswith("Line 2:") and "NUL" in violation


def test_it_rejects_a_script_over_the_size_limit_without_parsing_it() -> None:
    (violation,) = check("x = 1\n" * (MAX_SCRIPT_CHARS // 6 + 1))
    assert "the limit is" in violation


@pytest.mark.parametrize(
    "script",
    [
        "x = " + "(" * 5000 + ")" * 5000,
        "x = " + "-" * 150_000 + "1",
        "x = 1" + "+1" * 90_000,
        "x = " + "[" * 3000 + "]" * 3000,
        "x = " + "not " * 40_000 + "1",
        "x = " + "a." * 90_000 + "b",
    ],
)
def test_it_reports_deeply_nested_scripts_instead_of_raising(script: str) -> None:
    violations = check(script + "\nemit_result(x)\n")
    assert violations and all(v.startswith("Line ") for v in violations)


@pytest.mark.parametrize("script", [None, b"emit_result(1)", 42, ["emit_result(1)"], object()])
def test_it_rejects_input_that_is_not_text(script: object) -> None:
    (violation,) = validate_script(script, TOOLS)  # type: ignore[arg-type]
    assert violation.startswith("Line 1: the script must be text")


def test_it_accepts_a_str_subclass() -> None:
    class Text(str):
        pass

    assert validate_script(Text("emit_result(1)"), TOOLS) == []


@pytest.mark.parametrize("tools", [None, 5, "get_user", [None, 3, "__x", "get_user"], iter(())])
def test_it_tolerates_odd_tool_lists(tools: object) -> None:
    assert isinstance(validate_script("x = get_user(user_id=1)\nemit_result(x)", tools), list)


def test_it_treats_a_single_tool_name_string_as_one_tool() -> None:
    assert validate_script("emit_result(get_user(user_id=1))", "get_user") == []


def test_it_rejects_lone_surrogates() -> None:
    (violation,) = check("x = '\ud800'\nemit_result(x)")
    assert violation.startswith("Line 1:")


@pytest.mark.parametrize("cookie", ["# -*- coding: utf_7 -*-", "# vim: set fileencoding=latin-1 :"])
def test_it_rejects_a_non_utf8_coding_cookie(cookie: str) -> None:
    (violation,) = check(f"{cookie}\nemit_result(1)\n")
    assert "encoding declaration" in violation


def test_it_accepts_a_utf8_coding_cookie() -> None:
    assert check("# -*- coding: utf-8 -*-\nemit_result(1)\n") == []
