"""A script tool whose description ends in a quote, a backslash or triple quotes still registers.

The description's first line becomes the docstring of the generated function; one ending in
`"` (`Say "hello"`) closed the docstring early and the tool could not be registered at all.
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
     'x""""', "tab\tand 'single'"],
)  # fmt: skip
def test_the_tool_registers_and_runs_with_its_summary_as_written(description):
    tool = replace(load_tool_dir(RSI), description=description)
    namespace = {"ToolResponse": ToolResponse}
    exec(function_source(tool), namespace)
    function = namespace[tool.name]
    assert function.__doc__ == description
    assert function(symbol="AAPL").success
    registered = register_script_tool(ToolRegistry(), tool)
    assert registered.name == tool.name


def test_a_summary_without_a_closing_quote_is_generated_as_before():
    # Its code digest comes from these fields: a tool accepted before keeps its acceptance.
    tool = replace(load_tool_dir(RSI), description='Compute the "RSI" of a symbol')
    assert '"""Compute the "RSI" of a symbol"""' in function_source(tool)
