"""A script-tool zip whose content zipfile, json or float() cannot read is a 422 naming the file
on the import page, and imports nothing, never a 500."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from jazzmine_web.catalog.models import Tool
from jazzmine_web.teams.models import Role
from jazzmine_web.teams.services import membership_set
from tests.scripttools.unreadable_zips import UNREADABLE_MEMBERS, UNREADABLE_TOOL_JSON

pytestmark = pytest.mark.django_db

CASES = {
    **{name: (data, member) for name, (data, member, _words) in UNREADABLE_MEMBERS.items()},
    **{name: (data, "x/tool.json") for name, (data, _words) in UNREADABLE_TOOL_JSON.items()},
}


@pytest.mark.parametrize("case", CASES)
def test_the_import_page_answers_422_naming_the_file(member, sandbox, case: str) -> None:
    data, member_name = CASES[case]
    membership_set(team=sandbox.team, user=member, role=Role.ADMIN)
    client = Client(raise_request_exception=False)
    client.force_login(member)
    response = client.post(
        reverse("scripttools:import"),
        {"sandbox": sandbox.pk, "archive": SimpleUploadedFile("tools.zip", data)},
    )
    assert response.status_code == 422
    assert member_name in response.content.decode()
    assert not Tool.objects.filter(sandbox=sandbox).exists()
