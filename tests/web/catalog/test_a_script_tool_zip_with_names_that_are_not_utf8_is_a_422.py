"""A script-tool zip naming its members with bytes flagged UTF-8 that are not is a 422 on the
import page saying the zip is unreadable, and imports nothing: zipfile's UnicodeDecodeError
was a 500."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from jazzmine_web.catalog.models import Tool
from tests.scripttools.test_a_zip_whose_member_names_are_not_utf8_is_refused_as_unreadable import (
    zip_named_otherwise,
)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("count", "words"),
    [(-1, "not a readable zip archive"), (1, "cannot be read")],
    ids=["central directory", "member header"],
)
def test_the_import_page_answers_422_saying_the_zip_is_unreadable(
    admin, empty_sandbox, count: int, words: str
) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    upload = SimpleUploadedFile("tools.zip", zip_named_otherwise(count))
    response = client.post(
        "/catalog/script-tools/import/", {"sandbox": empty_sandbox.pk, "archive": upload}
    )
    assert response.status_code == 422
    assert words in response.content.decode()
    assert not Tool.objects.filter(sandbox=empty_sandbox).exists()
