"""A tool's name becomes a global of every script its sandbox runs (`script_scope` puts the
tools over the emit helpers, module views and builtins). A tool named `print`, `emit_result`,
`json` or `ToolResponse` would silently take that name over: the script's output and its
result would go to the tool's code instead. A name the parser reads as another (NFKC:
`ｆetch` is `fetch`) would run whichever tool holds the normalised name."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from jazzmine.scripttools import ScriptTool
from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Sandbox, Tool
from jazzmine_web.catalog.services import script_tool_save, tool_update, tools_import
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db

TAKEN = [
    "print",  # a builtin every script reaches for
    "len",
    "emit_result",  # the harness's emit helpers
    "emit_log",
    "json",  # the pre-imported module views
    "datetime",
    "ToolResponse",  # the framework's own type
    "exec",  # a builtin the walls refuse: a tool of that name would be refused with it
    "__builtins__",  # replaces the script's builtins: every script of the sandbox breaks
    "_private",  # the validator ignores names that start with '_'
    "class",  # a keyword: `isidentifier()` says yes, no script can call it
    "None",
]


def module(name: str) -> str:
    return (
        f'@tool(description="Takes a name.", sandbox="s", name={name!r})\n'
        "def takes() -> ToolResponse:\n"
        "    return ToolResponse(success=True)\n"
    )


@pytest.mark.parametrize("name", TAKEN)
def test_an_import_refuses_a_tool_named_like_a_script_global(team, user, name) -> None:
    with pytest.raises(ImportRefused) as info:
        tools_import(team=team, files=[source_file("t.py", module(name))], author=user)
    assert name in str(info.value)
    assert not Tool.objects.exists() and not Sandbox.objects.exists()


def test_an_import_refuses_a_name_the_parser_reads_as_another(team, user) -> None:
    with pytest.raises(ImportRefused) as info:
        tools_import(team=team, files=[source_file("t.py", module("ｆetch"))], author=user)
    assert "NFKC" in str(info.value)
    assert not Tool.objects.exists()


# Two tools side by side whose names a page draws alike: a reviewer reads `get_оrders` in a
# script and in the review's list of tools, and approves what they take for `get_orders`.
LOOK_ALIKES = {
    "a Cyrillic o": "get_\u043erders",
    "a Greek omicron": "get_\u03bfrders",
    "a dotless i": "l\u0131st_orders",
    "Chinese": "\u67e5\u8be2\u8ba2\u5355",
}


@pytest.mark.parametrize("case", list(LOOK_ALIKES))
def test_a_name_beyond_ascii_is_refused_beside_the_one_it_looks_like(team, user, case) -> None:
    tools_import(team=team, files=[source_file("t.py", module("get_orders"))], author=user)
    with pytest.raises(ImportRefused) as info:
        tools_import(team=team, files=[source_file("u.py", module(LOOK_ALIKES[case]))], author=user)
    assert "ASCII" in str(info.value)
    assert list(Tool.objects.values_list("name", flat=True)) == ["get_orders"]
    tool = Tool.objects.get()
    with pytest.raises(ValidationError):
        tool_update(tool=tool, author=user, note="", name=LOOK_ALIKES[case])
    tool.refresh_from_db()
    assert tool.name == "get_orders"


def test_a_rename_to_a_taken_name_is_refused(team, user) -> None:
    tools_import(team=team, files=[source_file("t.py", module("takes"))], author=user)
    tool = Tool.objects.get(name="takes")
    with pytest.raises(ValidationError):
        tool_update(tool=tool, author=user, note="", name="emit_result")
    tool.refresh_from_db()
    assert tool.name == "takes"


@pytest.mark.parametrize("name", ["print", "json", "emit_result", "_private"])
def test_a_script_tool_named_like_a_script_global_is_refused(empty_sandbox, name) -> None:
    tool = ScriptTool(name=name, description="Takes a name.", source="print('{}')\n")
    with pytest.raises(ValidationError):
        script_tool_save(sandbox=empty_sandbox, tool=tool)
    assert not Tool.objects.exists()


def test_plain_names_still_import(team, user) -> None:
    tools_import(team=team, files=[source_file("t.py", module("fetch_orders"))], author=user)
    assert list(Tool.objects.values_list("name", flat=True)) == ["fetch_orders"]
