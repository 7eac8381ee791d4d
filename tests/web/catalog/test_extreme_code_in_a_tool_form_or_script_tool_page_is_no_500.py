"""Code CPython's parser gives up on (`1+1+...` 200 000 times: RecursionError) or a default
`ast.literal_eval` cannot build (`{[1]: 2}`: TypeError) is a form error, or a lint item that
fails, never a 500. The script tool's page lints its script in the web process on every view:
a member's script that crashed the linter made the page of that tool unreadable to everyone,
the admin who should review it included."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from jazzmine.scripttools import ScriptTool
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import script_tool_save

pytestmark = pytest.mark.django_db

LONG_SUM = "+".join(["1"] * 200_000)
# Within a tool's 100,000 characters (a longer source is refused before it is read).
PYTHON_SOURCES = {
    "long sum": "def fetch_x():\n    return " + "+".join(["1"] * 49_000) + "\n",
    "long attribute chain": "def fetch_x():\n    return a" + ".b" * 49_000 + "\n",
    "deep not": "def fetch_x():\n    return " + "not " * 24_000 + "1\n",
}
READS_ARGS = "import json, sys\nargs = json.load(sys.stdin)\n"
SCRIPTS = {
    "long sum": "x = " + LONG_SUM + "\nprint('{}')\n",
    "long attribute chain": "x = a" + ".b" * 200_000 + "\n",
    "deep not": "x = " + "not " * 100_000 + "1\n",
    "unhashable dict key as a default": READS_ARGS + 'x = args.get("k", {[1]: 2})\nprint("{}")\n',
    "unhashable set item as a default": READS_ARGS + 'x = args.get("k", {1, [2]})\nprint("{}")\n',
}


@pytest.fixture
def browser(member) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(member)
    return client


@pytest.mark.parametrize("case", PYTHON_SOURCES)
def test_the_tool_form_refuses_it_with_a_field_error(browser, empty_sandbox, case) -> None:
    response = browser.post(
        f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/",
        {
            "name": "fetch_x",
            "description": "Fetch x.",
            "source": PYTHON_SOURCES[case],
            "kind": "python",
        },
    )
    assert response.status_code == 422
    assert "too deeply nested" in response.content.decode()
    assert not Tool.objects.exists()


@pytest.mark.parametrize("case", SCRIPTS)
def test_the_script_tool_page_shows_its_lint_failing(browser, member, empty_sandbox, case) -> None:
    tool = ScriptTool(name="fetch_x", description="Fetch x. Use when x.", source=SCRIPTS[case])
    row, _ = script_tool_save(sandbox=empty_sandbox, tool=tool, author=member)
    response = browser.get(reverse("catalog:tool", args=[row.pk]))
    assert response.status_code == 200
    assert 'data-lint="' in response.content.decode()
