"""A `.py` import never rewrites a script tool of the same name: it is refused, naming it.

The script-tool import refuses a Python tool's name; the `.py` import took a script tool's
row and saved the function over its script through the Python tools' update, which knows
nothing of the publish gate: the tool stayed published, offered to LLMs and baked into the
sandbox's image, with code no trial ever ran, and a row of kind "script" holding a Python
function as its script.
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from jazzmine_web.catalog.models import Tool
from jazzmine_web.scripttools.services import script_tool_publish

from .conftest import trial_recorded

pytestmark = pytest.mark.django_db

MODULE = b"""
from jazzmine.core.tools import ToolResponse, tool


@tool(description="Compute the RSI of a ticker.", sandbox="quant")
def calculate_rsi(symbol: str = "AAPL") -> ToolResponse:
    return ToolResponse(success=True, data={"rsi": 99.0})
"""


def test_the_import_is_refused_and_the_published_script_tool_stays_as_it_was(
    member, rsi_row
) -> None:
    trial_recorded(rsi_row)
    script_tool_publish(tool=rsi_row)
    before = Tool.objects.get(pk=rsi_row.pk)
    client = Client()
    client.force_login(member)
    response = client.post(
        reverse("catalog:import"),
        {"team": rsi_row.sandbox.team.pk, "files": SimpleUploadedFile("rsi.py", MODULE)},
    )
    assert response.status_code == 422
    assert "calculate_rsi is a script tool" in response.content.decode()
    row = Tool.objects.get(pk=rsi_row.pk)
    assert (row.source, row.checksum, row.published) == (
        before.source,
        before.checksum,
        True,
    )
    assert row.versions.count() == 1
