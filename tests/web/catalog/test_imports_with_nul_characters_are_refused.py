"""An imported tool whose text holds a NUL character (written as an escape: a NUL byte in a
file is refused as binary already) is refused naming the tool and the field; nothing is stored.

PostgreSQL can neither store nor look up text with a NUL: each of these was a 500 there (a
sandbox or tool looked up by its name, a description or parameter stored).
"""

from __future__ import annotations

import pytest
from django.test import Client

from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Sandbox, Tool
from jazzmine_web.catalog.services import tools_import
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db

TOOL = """
@tool({args})
def look(x: str) -> ToolResponse:
    return ToolResponse(success=True)
"""
FINE = 'description="Look.", sandbox="s"'
CONFIG = 'register_sandbox(SandboxConfig(name="s", {args}))\n'


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (TOOL.format(args=r'description="Lo\x00ok.", sandbox="s"'), "description"),
        (TOOL.format(args=r'description="Look.", sandbox="s\x00"'), "sandbox"),
        (TOOL.format(args=r'description="Look.", sandbox="s", name="lo\u0000ok"'), "name"),
        (TOOL.format(args=r'"Look.", [ToolParameter("x", "str", description="\0")], sandbox="s"'),
         "parameters[0].description"),
        (TOOL.format(args=r'"Look.", [ToolParameter("x", "str", examples=["a\x00"])], sandbox="s"'),
         "parameters[0].examples[0]"),
        (TOOL.format(args=FINE) + CONFIG.format(args=r'base_image="jazzmine/base:\x00"'),
         "base_image"),
        (CONFIG.format(args="memory_mb=256").replace('name="s"', r'name="s\x00"'), "name"),
    ],
    ids=["description", "sandbox", "name", "parameter", "example", "base-image", "sandbox-name"],
)  # fmt: skip
def test_a_nul_in_an_imported_module_is_refused_naming_the_field(team, user, text, field) -> None:
    with pytest.raises(ImportRefused) as refused:
        tools_import(team=team, files=[source_file("nul.py", text)], author=user)
    (problem,) = [str(p) for p in refused.value.problems]
    assert problem.startswith("nul.py, line ")
    assert f"'{field}' contains a NUL character (\\u0000)" in problem
    assert not Tool.objects.exists() and not Sandbox.objects.exists()


def test_the_import_page_answers_422_naming_the_field(team, user) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    membership_set(team=team, user=user, role=Role.ADMIN)
    client = Client(raise_request_exception=False)
    client.force_login(user)
    text = TOOL.format(args=r'description="Lo\x00ok.", sandbox="s"').encode()
    response = client.post(
        "/catalog/import/",
        {"team": team.pk, "files": SimpleUploadedFile("nul.py", text)},
    )
    assert response.status_code == 422
    assert "&#x27;description&#x27; contains a NUL character" in response.content.decode()
    assert not Tool.objects.exists()
