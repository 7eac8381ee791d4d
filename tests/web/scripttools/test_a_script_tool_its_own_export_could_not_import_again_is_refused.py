"""A script tool is stored only if its two files, as the catalog writes them out, are within
the sizes a zip of script tools may hold (`MAX_SCRIPT_BYTES`, `MAX_TOOL_JSON_BYTES`).

The zip import refused a script over 1 MiB or a tool.json over 256 KiB, but the script tool
form took either (up to the 2 MiB of a request), and a compact tool.json just under the limit
was taken from a zip and exported two-space indented, several times its size. Each was saved
and exported into a zip that the import then refused: a team's own backup could not be
restored. Now each is refused at the save, naming the file and the limit, and nothing is stored.
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from jazzmine.scripttools import load_zip
from jazzmine.scripttools.layout import MAX_SCRIPT_BYTES, MAX_TOOL_JSON_BYTES
from jazzmine_web.catalog.models import Tool
from jazzmine_web.scripttools.services import script_tools_export

pytestmark = pytest.mark.django_db

DESCRIPTION = "Echo the input back for tests. Use when a test needs the echo script."
SCHEMA = {"type": "object", "properties": {}}


def form(**changes: str) -> dict[str, str]:
    """Return the script tool form's fields for a small good tool, some of them changed."""
    data = {
        "name": "echo_input", "description": DESCRIPTION, "runtime": "python3",
        "timeout": "30", "parameters": json.dumps(SCHEMA), "source": "print('{}')\n",
        "secrets": "", "dependencies": "", "tags": "", "note": "",
    }  # fmt: skip
    data.update(changes)
    return data


def post(client: Client, sandbox, data: dict[str, str]):
    return client.post(reverse("scripttools:create", args=[sandbox.pk]), data)


@pytest.fixture
def browser(admin) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(admin)
    return client


def padded_script(size: int) -> str:
    """Return a Python script of exactly `size` bytes."""
    head = "print('{}')\n#"
    return head + "x" * (size - len(head) - 1) + "\n"


def test_the_form_refuses_a_script_larger_than_a_zip_may_hold(browser, empty_sandbox) -> None:
    response = post(browser, empty_sandbox, form(source=padded_script(MAX_SCRIPT_BYTES + 1)))
    assert response.status_code == 422
    errors = " ".join(response.context["form"].non_field_errors())
    assert "script.py" in errors and f"{MAX_SCRIPT_BYTES:,}" in errors, errors
    assert not Tool.objects.exists()


def test_the_form_refuses_a_description_that_makes_tool_json_too_large(
    browser, empty_sandbox
) -> None:
    response = post(browser, empty_sandbox, form(description="d" * (MAX_TOOL_JSON_BYTES + 1)))
    assert response.status_code == 422
    errors = " ".join(response.context["form"].non_field_errors())
    assert "tool.json" in errors and f"{MAX_TOOL_JSON_BYTES:,}" in errors, errors
    assert not Tool.objects.exists()


def test_a_compact_tool_json_that_exports_too_large_is_refused_at_the_import(
    browser, empty_sandbox
) -> None:
    # 200 KB compact, one enum value a line once indented: more than twice that.
    schema = {"type": "object",
              "properties": {"n": {"type": "integer", "enum": list(range(30_000))}}}  # fmt: skip
    text = json.dumps({"name": "echo_input", "description": DESCRIPTION, "parameters": schema},
                      separators=(",", ":"))  # fmt: skip
    assert len(text) < MAX_TOOL_JSON_BYTES
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("echo_input/tool.json", text)
        archive.writestr("echo_input/script.py", "print('{}')\n")
    response = browser.post(
        reverse("scripttools:import"),
        {"sandbox": empty_sandbox.pk, "archive": SimpleUploadedFile("t.zip", buffer.getvalue())},
    )
    assert response.status_code == 422
    assert "tool.json" in response.content.decode()
    assert f"{MAX_TOOL_JSON_BYTES:,}" in response.content.decode()
    assert not Tool.objects.exists()


def test_the_largest_script_allowed_exports_and_imports_again(browser, empty_sandbox) -> None:
    response = post(browser, empty_sandbox, form(source=padded_script(MAX_SCRIPT_BYTES)))
    assert response.status_code == 302
    (tool,) = load_zip(script_tools_export(sandbox=empty_sandbox))
    assert len(tool.source.encode()) == MAX_SCRIPT_BYTES
