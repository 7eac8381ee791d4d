"""Text a person writes into a column with a length (a tool's name, its function's name, its
tags, a secret's name) is refused past that length with a message naming the limit, and
nothing is stored. PostgreSQL refuses the longer text with a DataError, a 500 (SQLite kept it:
these tests fail there too, on the missing message, and this suite runs on both)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from jazzmine.scripttools import ScriptTool
from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Sandbox, SecretValue, Tool
from jazzmine_web.catalog.services import script_tool_save, secret_value_set, tools_import
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db

NAME_LIMIT = Tool._meta.get_field("name").max_length
FUNCTION_LIMIT = Tool._meta.get_field("function_name").max_length
TAGS_LIMIT = Tool._meta.get_field("tags_index").max_length - 2  # ",a,b,": its commas around
SECRET_LIMIT = SecretValue._meta.get_field("name").max_length
LONG_DEF = "f" * (FUNCTION_LIMIT + 20)


def tool_text(*, name: str = "", function: str = "ping") -> str:
    named = f', name="{name}"' if name else ""
    return (
        f'@tool(description="Ping.", sandbox="s"{named})\n'
        f"def {function}(host: str) -> ToolResponse:\n    return ToolResponse(success=True)\n"
    )


@pytest.mark.parametrize(
    ("text", "words"),
    [(tool_text(name="n" * (NAME_LIMIT + 20)), f"the tool's name is {NAME_LIMIT + 20} "),
     (tool_text(function=LONG_DEF), "the tool's name is "),
     (tool_text(name="short", function=LONG_DEF), f"the function name {LONG_DEF[:40]}")],
    ids=["@tool name", "def name as the tool's", "def name under another"],
)  # fmt: skip
def test_an_import_refuses_a_name_past_its_column(team, user, text: str, words: str) -> None:
    with pytest.raises(ImportRefused) as refused:
        tools_import(team=team, files=[source_file("long.py", text)], author=user)
    (problem,) = [str(p) for p in refused.value.problems]
    assert words in problem and "it may be at most " in problem, problem
    assert not Tool.objects.exists()


def form_post(admin, sandbox: Sandbox, **fields: str):
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    data = {"name": "ping", "description": "Ping.", "kind": "python", "source": tool_text()}
    return client.post(f"/catalog/sandboxes/{sandbox.pk}/tools/new/", {**data, **fields})


def test_the_tool_form_refuses_a_function_name_past_its_column(admin, empty_sandbox) -> None:
    response = form_post(admin, empty_sandbox, source=tool_text(function=LONG_DEF))
    assert response.status_code == 422
    errors = " ".join(response.context["form"].non_field_errors())
    assert f"it may be at most {FUNCTION_LIMIT}" in errors, errors
    assert not Tool.objects.exists()


def test_the_tool_form_refuses_tags_past_their_column(admin, empty_sandbox) -> None:
    tags = ", ".join(f"tag{n:03d}" for n in range(80))  # 80 tags of 6: 559 with commas
    response = form_post(admin, empty_sandbox, tags=tags)
    assert response.status_code == 422
    errors = " ".join(response.context["form"].non_field_errors())
    assert "the tags are 559 characters long with a comma between each" in errors, errors
    assert f"together they may be at most {TAGS_LIMIT}" in errors
    assert not Tool.objects.exists()


def test_tags_up_to_their_column_are_kept(admin, empty_sandbox) -> None:
    tags = [f"t{n:03d}" for n in range(TAGS_LIMIT // 5)]  # 4 characters and a comma each
    response = form_post(admin, empty_sandbox, tags=", ".join(tags))
    assert response.status_code == 302
    assert Tool.objects.get().tags == tags


def test_a_script_tool_refuses_tags_past_their_column(empty_sandbox) -> None:
    tool = ScriptTool(name="echo", description="Echo the input back.", source="print('{}')\n")
    with pytest.raises(ValidationError, match=f"they may be at most {TAGS_LIMIT}"):
        script_tool_save(sandbox=empty_sandbox, tool=tool, tags=["x" * (TAGS_LIMIT + 1)])
    assert not Tool.objects.exists()


def test_a_secret_declared_before_the_limit_gets_a_clear_refusal_not_a_500(
    admin, empty_sandbox
) -> None:
    name = "K" * (SECRET_LIMIT + 50)
    # An older row: declared before names were bounded, and listed on its page for a value.
    Sandbox.objects.filter(pk=empty_sandbox.pk).update(secrets=[name])
    with pytest.raises(ValidationError, match=f"at most {SECRET_LIMIT}"):
        secret_value_set(sandbox=empty_sandbox, name=name, value="v", user=admin, actor=admin)
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    response = client.post(
        f"/catalog/sandboxes/{empty_sandbox.pk}/secrets/",
        {"name": name, "value": "v"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422
    assert f"at most {SECRET_LIMIT}" in response.content.decode()
    assert not SecretValue.objects.exists()
