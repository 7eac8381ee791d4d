"""The core's registry refuses code a tool would lose, rather than dropping it.

A tool is kept as its function alone (`RegisteredTool.source`: from its `def`, without its
decorators), and that is what runs in the sandbox. A source with an import beside the
function was registered with the import cut off, and the tool failed with NameError at its
first call; so was a live `@registry.tool` function that read a name of its module.
"""

from __future__ import annotations

import os

import pytest

from jazzmine.core.tools import ToolRegistry, ToolResponse

LIMIT = 3


def reads_its_modules_import() -> ToolResponse:
    return ToolResponse(success=True, data={"cwd": os.getcwd(), "limit": LIMIT})


def self_contained() -> ToolResponse:
    import os

    return ToolResponse(success=True, data=os.getcwd())


def register(source: str):
    return ToolRegistry().register_source(source, sandbox="default", description="Where it runs.")


def test_an_import_above_the_function_is_refused_naming_its_line() -> None:
    source = "import os\n\ndef do_u():\n    return os.getcwd()\n"
    with pytest.raises(ValueError) as refused:
        register(source)
    assert str(refused.value) == (
        "tool <source>: line 1: `import os` is outside the function do_u and would not be "
        "kept: only the function's own code runs in the sandbox; move the import inside the "
        "function"
    )


def test_a_future_import_is_refused_saying_to_remove_it() -> None:
    with pytest.raises(ValueError, match=r"line 1: .*remove it \(it cannot move inside"):
        register("from __future__ import annotations\n\ndef do_u(x: Shelf) -> None:\n    pass\n")


def test_docstrings_comments_and_the_decorator_are_no_code_to_refuse() -> None:
    # Passes before the change too: kept here so that the rule never refuses these.
    registered = register(
        '"""The module\'s docstring."""\n'
        "# a comment\n"
        "@tool(description='x')\n"
        "def do_u():\n"
        "    import os\n"
        "    return os.getcwd()\n"
        '"""A string after it: it does nothing."""\n'
    )
    assert registered.source == "def do_u():\n    import os\n    return os.getcwd()\n"


def test_a_live_tool_reading_its_modules_names_is_refused_naming_them() -> None:
    with pytest.raises(ValueError) as refused:
        ToolRegistry().tool(description="Where it runs.")(reads_its_modules_import)
    assert "reads_its_modules_import() uses LIMIT, os, defined outside the function" in str(
        refused.value
    )


def test_a_live_tool_reading_a_variable_of_the_function_around_it_is_refused() -> None:
    prefix = "cwd: "

    def reads_a_closure() -> ToolResponse:
        return ToolResponse(success=True, data=prefix)

    with pytest.raises(ValueError, match="reads_a_closure\\(\\) uses prefix, defined outside"):
        ToolRegistry().tool(description="Where it runs.")(reads_a_closure)


def test_a_self_contained_live_tool_is_registered() -> None:
    # Passes before the change too: the demo's tools are written this way.
    registry = ToolRegistry()
    registry.tool(description="Where it runs.")(self_contained)
    assert "import os" in registry.get_tool("default", "self_contained").source
