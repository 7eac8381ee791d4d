"""A tool.json nested deeper than the catalog's bound is refused on the page, naming the file,
never a 500.

Python's json reads nesting ~990 levels deep, but every copy of the schema (`copy.deepcopy`,
two frames a level) ran out of recursion at about 450: the zip import and the script tool form
answered 500, and a member's import could store a schema only just shallow enough, which every
later copy of the tool (its page, the registry, a trial) then had to survive.
"""

from __future__ import annotations

import html
import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from jazzmine.scripttools.model import MAX_JSON_DEPTH
from jazzmine_web.catalog.models import Tool

pytestmark = pytest.mark.django_db

DESCRIPTION = "Fetch x for tests. Use when a test needs the deep x script."


def _schema(depth: int) -> str:
    """Return a schema whose property's default nests `depth` objects deep."""
    default = "1"
    for _ in range(depth):
        default = '{"a": ' + default + "}"
    return '{"type": "object", "properties": {"x": {"type": "object", "default": ' + default + "}}}"


def _tool_json(depth: int) -> str:
    head = json.dumps({"name": "fetch_x", "description": DESCRIPTION})[:-1]
    return head + ', "parameters": ' + _schema(depth) + "}"


@pytest.fixture
def browser(member) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(member)
    return client


def _refused(response) -> None:
    assert response.status_code == 422, response.status_code
    assert "nested more than" in html.unescape(response.content.decode())
    assert not Tool.objects.exists()


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 500])
def test_the_zip_import_refuses_it(browser, sandbox, depth) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("fetch_x/tool.json", _tool_json(depth))
        archive.writestr("fetch_x/script.py", "print('{}')\n")
    response = browser.post(
        reverse("scripttools:import"),
        {"sandbox": sandbox.pk, "archive": SimpleUploadedFile("x.zip", buffer.getvalue())},
    )
    _refused(response)


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 500])
def test_the_script_tool_form_refuses_it(browser, sandbox, depth) -> None:
    response = browser.post(
        reverse("scripttools:create", args=[sandbox.pk]),
        {
            "name": "fetch_x",
            "description": DESCRIPTION,
            "runtime": "python3",
            "timeout": "30",
            "parameters": _schema(depth),
            "source": "print('{}')\n",
        },
    )
    _refused(response)


def test_a_schema_as_deep_as_the_bound_is_saved(browser, sandbox) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        # The default sits three levels under the tool.json's top: parameters, properties, x.
        archive.writestr("fetch_x/tool.json", _tool_json(MAX_JSON_DEPTH - 4))
        archive.writestr("fetch_x/script.py", "print('{}')\n")
    response = browser.post(
        reverse("scripttools:import"),
        {"sandbox": sandbox.pk, "archive": SimpleUploadedFile("x.zip", buffer.getvalue())},
    )
    assert response.status_code == 200, html.unescape(response.content.decode())[-800:]
    assert Tool.objects.filter(name="fetch_x").exists()
