"""A tool's description longer than a prompt should carry is refused, wherever it comes in.

Every prompt of a sandbox lists each tool with its description, so an LLM reads (and is paid
for) all of it on every turn. A Python tool's description had no bound but the request's (a
megabyte went in as readily as a line), a script tool's only tool.json's size. Now the form,
a `.py` import and a script tool all refuse one past `MAX_TOOL_DESCRIPTION_CHARS`, saying its
length and the limit, and store nothing; one at the limit is kept.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from jazzmine.scripttools import ScriptTool
from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import script_tool_save, tools_import
from jazzmine_web.catalog.services.rules import MAX_TOOL_DESCRIPTION_CHARS
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db

LONG = "Ping a host. " + "x" * MAX_TOOL_DESCRIPTION_CHARS
PING = "def ping(host: str) -> ToolResponse:\n    return ToolResponse(success=True)\n"
SAID = f"at most {MAX_TOOL_DESCRIPTION_CHARS:,}"


def test_the_tool_form_answers_422(admin, empty_sandbox) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    response = client.post(
        f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/",
        {"name": "ping", "description": LONG, "kind": "python", "source": PING},
    )
    assert response.status_code == 422
    assert SAID in " ".join(response.context["form"].non_field_errors())
    assert not Tool.objects.exists()


def test_a_py_import_refuses_it_and_imports_nothing(team, user) -> None:
    text = f"@tool(description={LONG!r}, sandbox='s')\n{PING}"
    with pytest.raises(ImportRefused) as refused:
        tools_import(team=team, files=[source_file("ping.py", text)], author=user)
    assert SAID in " ".join(str(p) for p in refused.value.problems)
    assert not Tool.objects.exists()


def test_a_script_tool_refuses_it(empty_sandbox) -> None:
    tool = ScriptTool(name="echo", description=LONG, source="print('{}')\n")
    with pytest.raises(ValidationError, match=SAID):
        script_tool_save(sandbox=empty_sandbox, tool=tool)
    assert not Tool.objects.exists()


def test_one_at_the_limit_is_kept(empty_sandbox) -> None:
    tool = ScriptTool(
        name="echo", description="d" * MAX_TOOL_DESCRIPTION_CHARS, source="print(1)\n"
    )
    row, _ = script_tool_save(sandbox=empty_sandbox, tool=tool)
    assert len(row.description) == MAX_TOOL_DESCRIPTION_CHARS
