"""A refused import says the real reason, and where inside a list, not "not a literal"."""

from __future__ import annotations

import pytest

from jazzmine_web.catalog.importer import ImportRefused, SourceFile, parse_files

HEAD = "from jazzmine.core.tools import ToolParameter, tool\n\n"


def problem(decorator: str) -> str:
    text = f"{HEAD}{decorator}\ndef f(a):\n    pass\n"
    data = text.encode()
    with pytest.raises(ImportRefused) as info:
        parse_files([SourceFile(name="t.py", size=len(data), data=data)])
    (found,) = info.value.problems
    return found.message


def test_a_computed_value_inside_a_list_names_its_place_not_the_list() -> None:
    message = problem('@tool("d", parameters=[ToolParameter("a", "str", default=make())])')
    assert "argument 'parameters' is not a literal" not in message  # the list is fine
    assert "(item 1, ToolParameter('a', default=…)): `make()` is not a literal value" in message
    assert "it calls make()" in message and "without running it" in message


def test_a_type_written_as_the_python_type_says_to_write_its_name() -> None:
    message = problem('@tool("d", parameters=[ToolParameter("a", str)])')
    assert "str is the Python type itself: write its name as a string, 'str'" in message


def test_an_unknown_argument_is_named_as_unknown_not_as_not_a_literal() -> None:
    message = problem('@tool("d", parameters=[ToolParameter("a", "str", size=1)])')
    assert "not a literal" not in message
    assert "argument 'parameters' (item 1): ToolParameter() has no argument 'size'" in message
    assert "(it takes name, type, description" in message
    message = problem('@tool("d", timeout=5)')
    assert message.startswith("@tool on f(): tool() has no argument 'timeout' (it takes")


def test_a_variable_a_comprehension_and_unpacking_each_say_what_they_are() -> None:
    assert "'PARAMS' is a variable" in problem('@tool("d", parameters=PARAMS)')
    message = problem('@tool("d", parameters=[ToolParameter(n, "str") for n in "ab"])')
    assert "it is a comprehension" in message
    message = problem('@tool("d", parameters=[ToolParameter("a", "str"), *COMMON])')
    assert "(item 2): `*COMMON` is not a literal value: `*` unpacks only when the file runs" in (
        message
    )
    message = problem('@tool("d", parameters=[ToolParameter("a", "str", options={"x"})])')
    assert "a set is not a JSON value: write a list [...] instead" in message
