"""A Python tool's parameter holding NaN or an infinity in a field other than its default (the
tool form reads `NaN` and `Infinity` as numbers, a `.py` file writes `1e999`) is a field error
or an import problem naming the field, and nothing is stored: the save failed on the JSON
column (SQLite's check, PostgreSQL's jsonb), a 500."""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import tools_import
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db

SOURCE = "def count(n: int) -> ToolResponse:\n    return ToolResponse(success=True)\n"
# {case: (the parameters as the form's JSON, the field the error names)}
FORM_PARAMETERS = {
    "examples": ('[{"name": "n", "type": "int", "examples": [1, NaN]}]', "examples[1]"),
    "options": ('[{"name": "n", "type": "int", "options": [Infinity]}]', "options[0]"),
    "nested example": ('[{"name": "n", "type": "int", "examples": [{"a": -Infinity}]}]',
                       "examples[0]['a']"),
    # Fields of text or a boolean refuse any number, NaN too, as no text or boolean.
    "description": ('[{"name": "n", "type": "int", "description": NaN}]',
                    "description must be a string"),
    "display_name": ('[{"name": "n", "type": "int", "display_name": 1e999}]',
                     "display_name must be a string"),
    "required": ('[{"name": "n", "type": "int", "required": NaN}]',
                 "required must be true or false"),
}  # fmt: skip


@pytest.mark.parametrize("case", FORM_PARAMETERS)
def test_the_tool_form_answers_422_naming_the_field(admin, empty_sandbox, case: str) -> None:
    parameters, where = FORM_PARAMETERS[case]
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    response = client.post(
        f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/",
        {
            "name": "count",
            "description": "Count.",
            "parameters": parameters,
            "source": SOURCE,
            "kind": "python",
        },
    )
    assert response.status_code == 422
    errors = " ".join(response.context["form"].non_field_errors())
    said = where if " must be " in where else f"{where} is "
    assert f"ToolParameter 'n' {said}" in errors or f"ToolParameter 'n': {said}" in errors, errors
    assert not Tool.objects.exists()


@pytest.mark.parametrize(
    ("argument", "where"),
    [("examples=[1e999]", "examples[0]"), ("options=[-1e999]", "options[0]"),
     ("examples=[{'a': [1e999]}]", "examples[0]['a'][0]")],
)  # fmt: skip
def test_an_import_is_refused_naming_the_field(team, user, argument: str, where: str) -> None:
    text = (
        f'@tool(description="Count.", sandbox="s", parameters=[ToolParameter("n", "int", '
        f"{argument})])\n{SOURCE}"
    )
    with pytest.raises(ImportRefused) as refused:
        tools_import(team=team, files=[source_file("count.py", text)], author=user)
    (problem,) = [str(p) for p in refused.value.problems]
    assert f"ToolParameter 'n' {where} is " in problem and "JSON cannot represent" in problem
    assert not Tool.objects.exists()
