"""A Python tool whose own defaults differ from its documented ones is flagged."""

from __future__ import annotations

import pytest

from jazzmine.core.tools import ToolParameter
from jazzmine.core.tools.lint import lint_passed, lint_python_tool, type_known


def _item(items, key):
    return next(item for item in items if item.id == key)


def _defaults(source: str, parameters=()) -> tuple[bool, str]:
    item = _item(lint_python_tool(source, list(parameters)), "defaults_match_signature")
    return item.passed, item.message


LIMIT_20 = [ToolParameter("limit", "int", "Most rows.", default=20)]


@pytest.mark.parametrize(
    "signature",
    [
        "def f(limit=10):",
        "def f(limit: int = 10):",
        "def f(q: str, limit: int = 10) -> ToolResponse:",
        "def f(q, /, limit=10):",
        "def f(q, *, limit: int = 10):",
        "async def f(*, limit: int = 10):",
        "def f(limit: float = 10.5):",
        "def f(limit: int | None = None):",
        "def f(limit: str = '20'):",
    ],
)
def test_a_signature_default_that_differs_from_the_toolparameter_is_flagged(signature) -> None:
    passed, message = _defaults(f"{signature}\n    return 1\n", LIMIT_20)
    assert not passed
    assert message.startswith("limit: documented default 20 but the function's default is ")


@pytest.mark.parametrize(
    "signature",
    [
        "def f(limit=20):",
        "def f(limit: int = 20):",
        "def f(q, *, limit: int = 20):",
        "async def f(limit=20.0):",
        "def f(limit=+20):",
    ],
)
def test_a_signature_default_equal_to_the_toolparameter_passes(signature) -> None:
    assert _defaults(f"{signature}\n    return 1\n", LIMIT_20) == (True, "ok")


@pytest.mark.parametrize(
    "docstring",
    [
        # Google
        "Args:\n        limit (int): Most rows. Defaults to 20.",
        "Args:\n        limit: Most rows.\n            Defaults to ``20``.",
        # Sphinx
        ":param limit: Most rows (default: 20).",
        ":param int limit: Most rows, default=20",
        # NumPy
        "Parameters\n    ----------\n    limit : int, default 20\n        Most rows.",
        "Parameters\n    ----------\n    limit : int, optional\n        Most rows. Default is 20.",
    ],
)
def test_a_docstring_default_that_differs_from_the_signature_is_flagged(docstring) -> None:
    source = (
        f'def f(q, limit: int = 10):\n    """Find rows.\n\n    {docstring}\n    """\n    return 1\n'
    )
    passed, message = _defaults(source)
    assert not passed
    assert message == "limit: the docstring says default 20 but the function's default is 10"
    same = source.replace("limit: int = 10", "limit: int = 20")
    assert _defaults(same) == (True, "ok")


def test_the_docstring_default_of_another_parameter_is_not_taken_for_this_one() -> None:
    source = (
        'def f(limit=10, page=1):\n    """Find rows.\n\n    Args:\n'
        "        limit: Most rows. Defaults to 10.\n"
        "        page: Page number. Defaults to 1.\n\n"
        "    Returns:\n        Rows, the default being 20 of them.\n"
        '    """\n    return 1\n'
    )
    assert _defaults(source) == (True, "ok")


def test_string_and_keyword_defaults_are_compared_as_values() -> None:
    params = [
        ToolParameter("order", "str", "Sort order.", default="asc"),
        ToolParameter("exact", "bool", "Match whole words.", default=True),
    ]
    source = "def f(order='asc', exact=True):\n    return 1\n"
    assert _defaults(source, params) == (True, "ok")
    passed, message = _defaults("def f(order='desc', exact=1):\n    return 1\n", params)
    assert not passed
    assert (
        'order: documented default "asc"' in message and "exact: documented default true" in message
    )
    doc = 'def f(order="asc"):\n    """Sort.\n\n    :param order: Sort order (default: ``desc``).\n    """\n'
    assert _defaults(doc) == (
        False,
        "order: the docstring says default 'desc' but the function's default is \"asc\"",
    )


def test_a_documented_default_without_a_signature_default_is_flagged() -> None:
    passed, message = _defaults("def f(limit):\n    return 1\n", LIMIT_20)
    assert not passed and "the function has no default" in message


def test_a_signature_default_the_llm_is_not_told_about_is_flagged() -> None:
    params = [ToolParameter("limit", "int", "Most rows.")]
    passed, message = _defaults("def f(limit=10):\n    return 1\n", params)
    assert not passed and "no default is documented" in message
    # Required parameters and None defaults need no documented default.
    assert _defaults("def f(limit=None):\n    return 1\n", params) == (True, "ok")
    required = [ToolParameter("limit", "int", "Most rows.", required=True)]
    assert _defaults("def f(limit=10):\n    return 1\n", required) == (True, "ok")


def test_expressions_it_cannot_evaluate_are_left_alone() -> None:
    source = "def f(limit=PAGE_SIZE, when=time.time()):\n    return 1\n"
    assert _defaults(source, LIMIT_20) == (True, "ok")


def test_an_optional_parameter_without_a_default_in_the_function_is_flagged() -> None:
    params = [ToolParameter("host", "str", "The host.")]
    items = lint_python_tool("def ping(host):\n    return 1\n", params)
    item = _item(items, "optional_have_defaults")
    assert not item.passed and "host" in item.message and not lint_passed(items)
    params = [ToolParameter("host", "str", "The host.", required=True)]
    assert lint_passed(lint_python_tool("def ping(host):\n    return 1\n", params))


def test_parameters_may_be_given_as_the_catalogs_dicts() -> None:
    params = [ToolParameter("limit", "int", default=20).to_dict()]
    assert not _defaults("def f(limit=10):\n    return 1\n", params)[0]


def test_a_source_that_does_not_parse_fails_every_item_saying_why() -> None:
    items = lint_python_tool("def f(:\n", [])
    assert all(not item.passed and item.message.startswith("not checked") for item in items)


def test_a_parameter_no_script_may_pass_is_flagged() -> None:
    # The sandbox refuses an undocumented argument: its default is all a call ever gets.
    params = [ToolParameter("sku", "str", "The SKU.", required=True)]
    kept = _item(lint_python_tool("def q(sku, cache={}):\n    return 1\n", params),
                 "parameters_documented")  # fmt: skip
    assert not kept.passed and "no script may pass cache" in kept.message
    needed = _item(lint_python_tool("def q(sku, *, region):\n    return 1\n", params),
                   "parameters_documented")  # fmt: skip
    assert not needed.passed and "every call fails" in needed.message and "region" in needed.message
    assert _item(lint_python_tool("def q(sku, **extra):\n    return 1\n", params),
                 "parameters_documented").passed  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "str", "int", "float", "bool", "list", "dict", "List[str]", "list[dict[str, int]]",
        "Optional[Dict[str, Any]]", "int | None", "typing.List[int]", "Tuple[int, ...]",
        'Literal["asc", "desc"]', "integer", "number", "boolean", "array", "object", "String",
        " int ", "datetime",
    ],
)  # fmt: skip
def test_a_python_or_json_schema_type_is_known(text: str) -> None:
    assert type_known(text)


@pytest.mark.parametrize(
    "text",
    ["strnig", "itn", "Order", "", "List[strr]", "os.system()", "str; import os", "x.y",
     "lambda: 1", "[str]", "str or int"],
)  # fmt: skip
def test_a_misspelt_or_made_up_type_is_flagged(text: str) -> None:
    assert not type_known(text)
    params = [ToolParameter("sku", text or "?", "The SKU.", required=True)]
    item = _item(lint_python_tool("def q(sku):\n    return 1\n", params), "parameter_types_known")
    assert not item.passed and "sku (" in item.message
