"""A script-tool zip whose tool.json or script holds a NUL character is a 422 naming the tool
and the field on the import page; nothing is imported.

tool.json can spell a NUL as the escape `\\u0000` and a script can hold the byte itself;
PostgreSQL can store neither in text nor in jsonb, so each import was a 500 there.
"""

from __future__ import annotations

import html

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from jazzmine_web.catalog.models import Tool
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set
from tests.scripttools.unreadable_zips import SCRIPT, tool_json_text, zip_of

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("tool_json", "script", "field"),
    [
        (tool_json_text().replace("Answer", "An\\u0000swer"), SCRIPT, "description"),
        (tool_json_text(', "note": "a\\u0000"'), SCRIPT, "note"),
        (tool_json_text(', "note\\u0000": 1'), SCRIPT, "note\\u0000"),
        (
            tool_json_text().replace(
                '{"type": "object"}',
                '{"type": "object", "properties": {"q": {"type": "string", "enum": ["\\u0000"]}}}',
            ),
            SCRIPT,
            "parameters.properties.q.enum[0]",
        ),
        (tool_json_text(), "print(1)\x00\n", "script.py"),
    ],
    ids=["description", "extra-value", "extra-key", "schema", "script"],
)
def test_the_import_page_answers_422_naming_the_field(
    member, sandbox, tool_json, script, field
) -> None:
    membership_set(team=sandbox.team, user=member, role=Role.ADMIN)
    client = Client(raise_request_exception=False)
    client.force_login(member)
    data = zip_of({"x/tool.json": tool_json, "x/script.py": script})
    response = client.post(
        reverse("scripttools:import"),
        {"sandbox": sandbox.pk, "archive": SimpleUploadedFile("tools.zip", data)},
    )
    assert response.status_code == 422, response.content[:300]
    assert f"x: '{field}' contains a NUL character" in html.unescape(response.content.decode())
    assert not Tool.objects.filter(sandbox=sandbox).exists()
