"""A tool's parameters are named as a script passes them: ASCII letters, digits and '_', not
starting with a digit, and not a Python keyword. Refused naming the parameter otherwise, at
the tool.json import, the script tool form and the `.py` import, and nothing is stored.

A tool is a function of the sandbox's scripts, and the LLM calls it by keyword from the
parameter names its prompt lists. A JSON Schema property `class`, `my-arg` or `user name` (or a
`ToolParameter(name="class")` documented on a `**kwargs` function) was stored and offered: the
call an LLM writes from it, `lookup(class="x")` or `lookup(my-arg=1)`, does not even parse. A
letter beyond ASCII is read NFKC-normalised (`ｆile=` passes `file`), another name again.
"""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from jazzmine.scripttools import ScriptTool
from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import script_tool_save, tools_import
from tests.web.helpers import script_tools_zip_post, source_file

pytestmark = pytest.mark.django_db

# {case: (a parameter's name, words the refusal says)}
BAD = {
    "a keyword": ("class", "keyword"),
    "a dash": ("my-arg", "not a name"),
    "a space": ("user name", "not a name"),
    "a leading digit": ("1st", "not a name"),
    "a letter beyond ASCII": ("ｆile", "not a name"),
}
DESCRIPTION = "Look things up for tests. Use when a test needs the lookup script."


def script_tool(parameter: str) -> ScriptTool:
    schema = {"type": "object", "properties": {parameter: {"type": "string"}}}
    return ScriptTool(
        name="lookup", description=DESCRIPTION, source="print('{}')\n", parameters=schema
    )


@pytest.mark.parametrize("case", BAD)
def test_a_script_tool_refuses_it_naming_the_parameter(empty_sandbox, case: str) -> None:
    name, words = BAD[case]
    with pytest.raises(ValidationError) as refused:
        script_tool_save(sandbox=empty_sandbox, tool=script_tool(name))
    message = " ".join(refused.value.messages)
    assert repr(name) in message and words in message, message
    assert not Tool.objects.exists()


def test_a_tool_json_import_answers_422_and_imports_nothing(admin, empty_sandbox) -> None:
    good = {"name": "echo", "description": DESCRIPTION, "parameters": {"type": "object"}}
    bad = script_tool("class").to_json_dict()
    response = script_tools_zip_post(admin, empty_sandbox, good, bad)
    assert response.status_code == 422
    assert "lookup: parameter &#x27;class&#x27;" in response.content.decode()
    assert not Tool.objects.exists()  # not even the good one


def test_the_script_tool_form_answers_422(admin, empty_sandbox) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    schema = {"type": "object", "properties": {"my-arg": {"type": "string"}}}
    response = client.post(
        f"/catalog/sandboxes/{empty_sandbox.pk}/script-tools/new/",
        {"name": "lookup", "description": DESCRIPTION, "runtime": "python3", "timeout": "30",
         "parameters": json.dumps(schema), "source": "print('{}')\n"},
    )  # fmt: skip
    assert response.status_code == 422
    assert "'my-arg'" in " ".join(response.context["form"].non_field_errors())
    assert not Tool.objects.exists()


@pytest.mark.parametrize("case", BAD)
def test_a_py_import_refuses_it_on_a_kwargs_function(team, user, case: str) -> None:
    name, words = BAD[case]
    text = (
        f"@tool(description='Look up.', sandbox='s', parameters=[ToolParameter(name={name!r}, "
        "type='string')])\ndef lookup(**kwargs) -> ToolResponse:\n"
        "    return ToolResponse(success=True)\n"
    )
    with pytest.raises(ImportRefused) as refused:
        tools_import(team=team, files=[source_file("lookup.py", text)], author=user)
    (problem,) = [str(p) for p in refused.value.problems]
    assert repr(name) in problem and words in problem, problem
    assert not Tool.objects.exists()


@pytest.mark.parametrize("name", ["symbol", "_cursor", "period2", "Symbol"])
def test_names_a_script_can_pass_are_still_accepted(empty_sandbox, name: str) -> None:
    row, _ = script_tool_save(sandbox=empty_sandbox, tool=script_tool(name))
    assert [p["name"] for p in row.parameters] == [name]
