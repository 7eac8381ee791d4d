"""A parameter field of the wrong type is refused, naming it; rows of before are read as meant.

A parameter's `type` given as a number (or a list, or null) was saved, and the tool's page
answered 500 from then on; `"options": "pending"` became seven one-letter options, and
`"description": ["x"]` was shown as `["x"]`. Each field must hold its type now, from the
edit form, a module's `@tool` and a script tool alike; and catalog migration 0016 reads the
rows stored before as they were meant, so that no sandbox stops loading.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import registry_for_sandbox, tool_update, tools_import
from tests.web.helpers import form_refused, migrate, signed_in, source_file

pytestmark = pytest.mark.django_db

# {case: (the field as given, the message's words)}
WRONG = {
    "type as a number": ({"type": 5}, "type must be a non-empty string"),
    "type as a list": ({"type": ["int"]}, "type must be a non-empty string"),
    "type as null": ({"type": None}, "type must be a non-empty string"),
    "options as text": ({"options": "pending"}, "options must be a list"),
    "options as a number": ({"options": 5}, "options must be a list"),
    "description as a list": ({"description": ["x"]}, "description must be a string"),
    "examples as text": ({"examples": "ab"}, "examples must be a list"),
}


def parameters_with(tool: Tool, **fields) -> list[dict]:
    first, *rest = tool.parameters
    return [{**first, **fields}, *rest]


@pytest.mark.parametrize("case", WRONG)
def test_the_edit_refuses_it_and_the_tool_page_stays(ecommerce, member, case) -> None:
    fields, words = WRONG[case]
    tool = ecommerce.tools.get(name="get_orders")
    before = tool.parameters
    with pytest.raises(ValidationError) as refused:
        tool_update(tool=tool, parameters=parameters_with(tool, **fields), actor=member)
    assert words in str(refused.value)
    tool.refresh_from_db()
    assert tool.parameters == before
    assert signed_in(member).get(f"/catalog/tools/{tool.pk}/").status_code == 200


def test_the_edit_form_answers_422_naming_the_field(ecommerce, member) -> None:
    tool = ecommerce.tools.get(name="get_orders")
    client = signed_in(member)
    url = f"/catalog/tools/{tool.pk}/edit/"
    for _ in range(2):
        response = form_refused(client, url, parameters=parameters_with(tool, type=5))
        assert "type must be a non-empty string" in response.content.decode()
    assert client.get(f"/catalog/tools/{tool.pk}/").status_code == 200


def test_an_import_refuses_it(team, user) -> None:
    text = (
        "from jazzmine.core.tools import tool, ToolParameter, ToolResponse\n\n"
        '@tool("Square it.", [ToolParameter("n", 5, "a number")], sandbox="s")\n'
        "def square_it(n) -> ToolResponse:\n    return ToolResponse(success=True, data=n * n)\n"
    )
    with pytest.raises(ImportRefused) as refused:
        tools_import(team=team, files=[source_file("inttype.py", text)], author=user)
    assert "type must be a non-empty string" in str(refused.value)
    assert not Tool.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_upgrade_reads_rows_of_before_as_meant(ecommerce, member) -> None:
    tool = ecommerce.tools.get(name="get_orders")
    first, *rest = tool.parameters
    Tool.objects.filter(pk=tool.pk).update(
        parameters=[
            {**first, "type": 5, "options": "pending", "description": ["x"], "required": "no"},
            *rest,
        ]
    )
    try:
        migrate(("catalog", "0015_script_tool_code_leaves_out_its_description"))
    finally:
        migrate()
    tool.refresh_from_db()
    fixed = tool.parameters[0]
    assert (fixed["type"], fixed["options"], fixed["description"], fixed["required"]) == (
        "5",
        ["pending"],
        '["x"]',
        True,
    )
    registry_for_sandbox(ecommerce).build_tools_prompt(ecommerce.name)  # loads
    assert signed_in(member).get(f"/catalog/tools/{tool.pk}/").status_code == 200
