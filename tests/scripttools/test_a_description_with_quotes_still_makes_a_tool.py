"""A script tool's description is its prompt, never part of the code generated for it.

It was the generated function's docstring: one ending in `"` (`Say "hello"`) closed the
docstring early and the tool could not be registered at all, every edit of it was new code
(a new trial, an admin's acceptance again), and text a member wrote sat in the code, one
escape away from running. Any description now makes the same function, which registers,
runs, and keeps the description as the prompt's.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from jazzmine.core.tools import ToolRegistry, ToolResponse
from jazzmine.scripttools import function_source, load_tool_dir, register_script_tool

from .samples import RSI


@pytest.mark.parametrize(
    "description",
    ['Say "hello"', 'Ends in two ""', '"', 'quote then backslash "\\', "a \\", '"""x"""',
     'x""""', "tab\tand 'single'", '""" + __import__("os").system("id") + """',
     "first\\\nsecond", "{name} {source!r}"],
)  # fmt: skip
def test_any_description_makes_the_same_function(description):
    plain = load_tool_dir(RSI)
    tool = replace(plain, description=description)
    assert function_source(tool) == function_source(plain)
    namespace = {"ToolResponse": ToolResponse}
    exec(function_source(tool), namespace)
    assert namespace[tool.name](symbol="AAPL").success
    registered = register_script_tool(ToolRegistry(), tool)
    assert registered.name == tool.name
    assert registered.tool.description == description
    assert registered.checksum == register_script_tool(ToolRegistry(), plain).checksum
