"""A zip whose tool.json holds `Infinity` (or `1e999`) is refused as a problem on the page,
never a database error: no JSON column stores a non-finite number."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.test import Client

from jazzmine_web.catalog.models import Tool

pytestmark = pytest.mark.django_db

TOOL_JSON = (
    '{"name": "fetch_x", "description": "Fetch x for tests. Use when x.", '
    '"parameters": {"type": "object", "maximum": 1e999}, "weird": Infinity}'
)


def zipped() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("fetch_x/tool.json", TOOL_JSON)
        archive.writestr("fetch_x/script.py", "print('{}')\n")
    return buffer.getvalue()


def test_the_import_page_refuses_it(member, sandbox) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    client = Client(raise_request_exception=False)
    client.force_login(member)
    upload = SimpleUploadedFile("tools.zip", zipped(), content_type="application/zip")
    response = client.post(
        "/catalog/script-tools/import/", {"sandbox": sandbox.pk, "archive": upload}
    )
    assert response.status_code == 422, response.status_code
    assert "finite" in response.content.decode()
    assert not Tool.objects.exists()
