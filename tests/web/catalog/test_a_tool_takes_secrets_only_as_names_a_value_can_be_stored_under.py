"""A tool's secrets are names as a sandbox's are: non-empty text no longer than the column a
value is stored under, from a `.py` import, the tool form or a tool.json, refused naming the
field otherwise. An empty name was stored, and a name longer than `SecretValue.name` was
listed on the sandbox page for a value that PostgreSQL then refused to store (a 500)."""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import SecretValue, Tool
from jazzmine_web.catalog.services import tools_import
from tests.web.helpers import script_tools_zip_post, source_file

pytestmark = pytest.mark.django_db

LONGEST = SecretValue._meta.get_field("name").max_length
TOO_LONG = "K" * (LONGEST + 1)
PING = "def ping(host: str) -> ToolResponse:\n    return ToolResponse(success=True)\n"


@pytest.mark.parametrize(
    ("secrets", "words"),
    [('[""]', "secrets[0] must be a name"), ('["KEY", "  "]', "secrets[1] must be a name"),
     (f'["{TOO_LONG}"]', f"at most {LONGEST}")],
    ids=["empty", "blank", "too long"],
)  # fmt: skip
def test_an_import_refuses_it_naming_the_field(team, user, secrets: str, words: str) -> None:
    text = f'@tool(description="Ping.", sandbox="s", secrets={secrets})\n{PING}'
    with pytest.raises(ImportRefused) as refused:
        tools_import(team=team, files=[source_file("ping.py", text)], author=user)
    (problem,) = [str(p) for p in refused.value.problems]
    assert problem.startswith("ping.py, line ") and words in problem, problem
    assert not Tool.objects.exists()


def test_the_tool_form_answers_422(admin, empty_sandbox) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    response = client.post(
        f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/",
        {"name": "ping", "description": "Ping.", "kind": "python", "source": PING,
         "secrets": f"SHOP_KEY\n{TOO_LONG}"},
    )  # fmt: skip
    assert response.status_code == 422
    assert f"at most {LONGEST}" in " ".join(response.context["form"].non_field_errors())
    assert not Tool.objects.exists()


@pytest.mark.parametrize(
    ("secrets", "words"),
    [([""], "secrets[0] must be a name"), ([TOO_LONG], f"at most {LONGEST}")],
    ids=["empty", "too long"],
)
def test_a_tool_json_import_answers_422(admin, empty_sandbox, secrets: list, words: str) -> None:
    tool_json = {"name": "echo", "description": "Echo the input back for tests.",
                 "secrets": secrets, "parameters": {"type": "object", "properties": {}}}  # fmt: skip
    response = script_tools_zip_post(admin, empty_sandbox, tool_json)
    assert response.status_code == 422
    assert words in response.content.decode()
    assert not Tool.objects.exists()
