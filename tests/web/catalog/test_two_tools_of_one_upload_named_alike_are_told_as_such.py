"""Two tools of one upload whose names differ only in case are refused as the upload's own clash.

The upload's first tool was written in the import's transaction, and the second then read
"Sandbox 'scratch' already has a tool named 'Dup_tool'": a tool the sandbox never had (the
whole upload is refused, so it has none after either). The message now names both tools of
the upload, for a zip of script tools and for Python modules alike; nothing is written and
what the sandbox held stays.
"""

from __future__ import annotations

import html

import pytest
from django.test import Client

from jazzmine_web.catalog.models import Tool
from tests.web.helpers import script_tools_zip_post

pytestmark = pytest.mark.django_db


def tool_json(name: str) -> dict:
    return {"name": name, "description": "d", "parameters": {"type": "object", "properties": {}}}


def module(*names: str) -> str:
    functions = "".join(
        f'\n@tool("Say {name}.", sandbox="scratch")\ndef {name}() -> ToolResponse:\n'
        "    return ToolResponse(success=True)\n"
        for name in names
    )
    return "from jazzmine.core.tools import tool, ToolResponse\n" + functions


def import_post(user, team, *files):
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client.post("/catalog/import/", {"team": team.pk, "files": list(files)})


def uploaded(name: str, text: str):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, text.encode(), content_type="text/x-python")


def test_a_zip_of_script_tools_named_alike(admin, empty_sandbox) -> None:
    for _ in range(2):  # and sent again: the same answer, nothing written
        response = script_tools_zip_post(admin, empty_sandbox, tool_json("Dup_tool"), tool_json("dup_tool"))  # fmt: skip
        page = html.unescape(response.content.decode())
        assert response.status_code == 422
        assert "this upload has tools named 'Dup_tool' and 'dup_tool'" in page, page[-2000:]
        assert "already has" not in page
        assert not Tool.objects.filter(sandbox=empty_sandbox).exists()


def test_a_python_module_with_tools_named_alike(admin, team, empty_sandbox) -> None:
    import_post(admin, team, uploaded("keep.py", module("kept")))
    response = import_post(admin, team, uploaded("tools.py", module("Lookup", "lookup")))
    page = html.unescape(response.content.decode())
    assert response.status_code == 422
    assert "this upload has tools named 'Lookup' and 'lookup'" in page, page[-2000:]
    assert "already has" not in page
    assert list(Tool.objects.filter(sandbox=empty_sandbox).values_list("name", flat=True)) == [
        "kept"
    ]


def test_a_tool_of_the_same_name_as_the_sandboxs_is_still_told_so(
    admin, team, empty_sandbox
) -> None:
    import_post(admin, team, uploaded("keep.py", module("Lookup")))
    response = import_post(admin, team, uploaded("tools.py", module("lookup")))
    page = html.unescape(response.content.decode())
    assert response.status_code == 422 and "already has a tool named 'Lookup'" in page
