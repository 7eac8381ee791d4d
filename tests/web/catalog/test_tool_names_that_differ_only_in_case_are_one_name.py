"""A sandbox holds one tool per name whatever its case: `get_orders` and `Get_Orders` side by
side are two tools to Python, one to a person skimming a prompt or a review, and one folder to
the case-insensitive file system (macOS, Windows) an export is unpacked on."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from jazzmine.scripttools import ScriptTool
from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import script_tool_save, tool_update, tools_import
from tests.web.helpers import source_file

from .test_a_tool_cannot_take_a_name_a_script_already_uses import module

pytestmark = pytest.mark.django_db

SPELLINGS = ["Get_orders", "GET_ORDERS", "get_Orders", "gEt_oRdErS"]


def names() -> list[str]:
    return sorted(Tool.objects.values_list("name", flat=True))


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_an_import_refuses_a_name_taken_in_another_case(team, user, spelling) -> None:
    tools_import(team=team, files=[source_file("t.py", module("get_orders"))], author=user)
    with pytest.raises(ImportRefused) as info:
        tools_import(team=team, files=[source_file("u.py", module(spelling))], author=user)
    assert "'get_orders'" in str(info.value) and "only in case" in str(info.value)
    assert names() == ["get_orders"]


def test_one_import_of_two_names_alike_in_case_stores_neither(team, user) -> None:
    two = module("get_orders") + "\n\n" + module("Get_Orders").replace("def takes", "def takes2")
    with pytest.raises(ImportRefused):
        tools_import(team=team, files=[source_file("t.py", two)], author=user)
    assert names() == []


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_rename_to_a_name_taken_in_another_case_is_refused(team, user, spelling) -> None:
    tools_import(team=team, files=[source_file("t.py", module("get_orders"))], author=user)
    other = module("list_orders").replace("def takes", "def lists")
    tools_import(team=team, files=[source_file("u.py", other)], author=user)
    tool = Tool.objects.get(name="list_orders")
    with pytest.raises(ValidationError, match="only in case"):
        tool_update(tool=tool, author=user, note="", name=spelling)
    assert names() == ["get_orders", "list_orders"]


def test_a_tool_may_change_the_case_of_its_own_name(team, user) -> None:
    tools_import(team=team, files=[source_file("t.py", module("get_orders"))], author=user)
    tool = Tool.objects.get()
    tool_update(tool=tool, author=user, note="", name="Get_Orders")
    assert names() == ["Get_Orders"]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_script_tool_named_like_another_in_another_case_is_refused(empty_sandbox, spelling):
    first = ScriptTool(name="get_orders", description="Gets orders.", source="print('{}')\n")
    script_tool_save(sandbox=empty_sandbox, tool=first)
    again = ScriptTool(name=spelling, description="Gets orders.", source="print('{}')\n")
    with pytest.raises(ValidationError, match="only in case"):
        script_tool_save(sandbox=empty_sandbox, tool=again)
    assert names() == ["get_orders"]


def test_the_same_name_in_another_sandbox_is_free(team, user) -> None:
    tools_import(team=team, files=[source_file("t.py", module("get_orders"))], author=user)
    elsewhere = module("Get_Orders").replace('sandbox="s"', 'sandbox="t"')
    tools_import(team=team, files=[source_file("u.py", elsewhere)], author=user)
    assert names() == ["Get_Orders", "get_orders"]
