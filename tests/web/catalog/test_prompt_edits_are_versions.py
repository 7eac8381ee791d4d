"""Every change of the XML prompt an LLM reads is a version: noted, diffed, rolled back.

Only code and dependencies change a tool's checksum, so a prompt-only version keeps the
sandbox's image (no rebuild).
"""

from __future__ import annotations

import html as htmllib
import json
import re

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from jazzmine.scripttools import ScriptTool
from jazzmine_web.catalog.models import BuildStatus, ImageBuild, Tool, ToolVersion
from jazzmine_web.catalog.selectors import sandbox_image_status, tool_version_diff
from jazzmine_web.catalog.services import (
    registry_for_sandbox,
    script_tool_save,
    tool_create,
    tool_rollback,
    tool_update,
    tools_import,
)
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db

SOURCE = (
    "def find_orders(status: str, limit: int = 20) -> ToolResponse:\n"
    "    return ToolResponse(success=True, data={'status': status, 'limit': limit})\n"
)
PARAMS = [
    {"name": "status", "type": "str", "description": "Order status.", "required": True},
    {"name": "limit", "type": "int", "description": "Most orders returned.", "default": 20},
]
FIRST = "List orders with one status."
SECOND = "List the orders that have one status, newest first."
THIRD = "List recent orders with one status."
PASSWORD = "correct horse battery"


@pytest.fixture
def orders(empty_sandbox, user):
    return tool_create(
        sandbox=empty_sandbox,
        name="find_orders",
        description=FIRST,
        source=SOURCE,
        parameters=PARAMS,
        author=user,
    )


@pytest.fixture
def built(orders):
    """Record a finished image build of the sandbox as it is now (what a build leaves)."""
    registry = registry_for_sandbox(orders.sandbox)
    return ImageBuild.objects.create(
        sandbox=orders.sandbox,
        checksum=registry.sandbox_checksum(orders.sandbox.name),
        digest=registry.sandbox_digest(orders.sandbox.name),
        tool_checksums={t.name: t.checksum for t in registry.tools(orders.sandbox.name)},
        status=BuildStatus.SUCCEEDED,
    )


@pytest.fixture
def browser(client, member):
    """A member logged in through the login page."""
    response = client.post("/login/", {"username": member.username, "password": PASSWORD})
    assert response.status_code == 302
    return client


def _xml(tool: Tool) -> str:
    return (
        registry_for_sandbox(tool.sandbox)
        .get_tool(tool.sandbox.name, tool.name)
        .tool.build_prompt()
    )


def _form(tool: Tool, **changes: object) -> dict[str, object]:
    tool.refresh_from_db()
    data = {
        "name": tool.name,
        "description": tool.description,
        "parameters": json.dumps(tool.parameters),
        "dependencies": "\n".join(tool.dependencies),
        "secrets": "\n".join(tool.secrets),
        "source": tool.source,
        "kind": "python",
        "tags": ", ".join(tool.tags),
        "note": "",
    }
    data.update(changes)
    return data


def _messages(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def _text(html: str) -> str:
    return htmllib.unescape(re.sub(r"<[^>]+>", "", html))


# Through the services (what the form, the admin site and imports all call)


def test_a_description_edit_is_a_version_with_its_note_and_the_same_checksum(
    orders, built, user
) -> None:
    checksum, image = orders.checksum, sandbox_image_status(orders.sandbox)
    assert image.code == image.UP_TO_DATE
    change = tool_update(tool=orders, description=SECOND, note="say newest first", author=user)
    version = change.new_version
    assert version.number == 2 and version.note == "say newest first" and version.author == user
    assert change.prompt_changed and not change.code_changed
    assert "no image rebuild" in change.summary()
    # Same code, same checksum: the image built before the edit is still the current one.
    orders.refresh_from_db()
    assert orders.checksum == checksum == version.checksum
    assert sandbox_image_status(orders.sandbox).code == image.UP_TO_DATE
    assert (
        version.prompt == _xml(orders) and f"<description>{SECOND}</description>" in version.prompt
    )
    assert version.interface["description"] == SECOND


def test_the_diff_shows_the_prompt_change_and_no_code_change(orders) -> None:
    tool_update(tool=orders, description=SECOND)
    diff = tool_version_diff(orders.versions.get(number=2))
    assert f"-<description>{FIRST}</description>" in diff.prompt
    assert f"+<description>{SECOND}</description>" in diff.prompt
    assert diff.code == ""


def test_rollback_restores_the_prompt_as_a_new_version_twice_in_a_row(orders, built) -> None:
    checksum = orders.checksum
    tool_update(tool=orders, description=SECOND, note="first edit")
    tool_update(tool=orders, description=THIRD, note="second edit")
    assert [v.note for v in orders.versions.order_by("number")] == [
        "Created", "first edit", "second edit",
    ]  # fmt: skip
    change = tool_rollback(tool=orders, version=orders.versions.get(number=1))
    orders.refresh_from_db()
    assert change.new_version.number == 4 and orders.description == FIRST
    assert change.new_version.note == "Rolled back to v1" and not change.remarks
    change = tool_rollback(tool=orders, version=orders.versions.get(number=2))
    orders.refresh_from_db()
    assert change.new_version.number == 5 and orders.description == SECOND
    assert orders.checksum == checksum
    assert sandbox_image_status(orders.sandbox).code == "up_to_date"
    # Rolling back to what the tool already is changes nothing.
    change = tool_rollback(tool=orders, version=orders.versions.get(number=5))
    assert not change.changed and orders.versions.count() == 5


@pytest.mark.parametrize(
    ("what", "parameters"),
    [
        ("default", [PARAMS[0], {**PARAMS[1], "default": 50}]),
        ("required", [PARAMS[0], {**PARAMS[1], "required": True}]),
        ("type", [PARAMS[0], {**PARAMS[1], "type": "integer"}]),
        ("description", [PARAMS[0], {**PARAMS[1], "description": "At most this many."}]),
        ("options", [{**PARAMS[0], "options": ["pending", "shipped"]}, PARAMS[1]]),
        ("examples", [{**PARAMS[0], "examples": ["pending"]}, PARAMS[1]]),
        ("removed", [PARAMS[0]]),
        ("order", [PARAMS[1], PARAMS[0]]),
    ],
)
def test_every_parameter_edit_that_changes_the_xml_is_a_version(orders, what, parameters) -> None:
    before = _xml(orders)
    change = tool_update(tool=orders, parameters=parameters, note=f"parameter {what}")
    assert _xml(orders) != before
    assert change.new_version.number == 2 and change.new_version.note == f"parameter {what}"
    assert change.prompt_changed and not change.code_changed
    assert change.new_version.interface["parameters"] == orders.parameters
    tool_rollback(tool=orders, version=orders.versions.get(number=1))
    assert _xml(orders) == before


def test_a_rename_is_a_version_and_rollback_restores_the_name(orders) -> None:
    change = tool_update(tool=orders, name="list_orders")
    assert (
        change.new_version.number == 2 and '<tool name="list_orders">' in change.new_version.prompt
    )
    tool_rollback(tool=orders, version=orders.versions.get(number=1))
    orders.refresh_from_db()
    assert orders.name == "find_orders"


def test_an_edit_that_changes_nothing_makes_no_version_and_says_so(orders) -> None:
    change = tool_update(
        tool=orders, description=FIRST, parameters=PARAMS, source=SOURCE, note="nothing"
    )
    assert not change.changed and change.new_version is None
    assert change.summary() == "nothing changed: no new version"
    change = tool_update(tool=orders, tags=["shop"], note="tags only")
    assert change.changed and change.new_version is None
    assert change.summary() == "neither the prompt nor the code changed: no new version"
    assert orders.versions.count() == 1


def test_a_code_edit_still_changes_the_checksum(orders, built) -> None:
    change = tool_update(tool=orders, source=SOURCE.replace("'limit': limit", "'n': limit"))
    assert change.code_changed and not change.prompt_changed
    assert "image needs a rebuild" in change.summary()
    assert sandbox_image_status(orders.sandbox).code == "needs_rebuild"


def test_versions_recorded_before_prompts_were_versioned_are_unknown_not_a_crash(
    orders, client, member
) -> None:
    # What the migration leaves on existing rows: no snapshot of the prompt.
    ToolVersion.objects.filter(tool=orders).update(prompt=None, interface=None)
    tool_update(tool=orders, description=SECOND, note="edit")
    diff = tool_version_diff(orders.versions.get(number=2))
    assert diff.prompt is None and [v.number for v in diff.prompt_unknown_in] == [1]
    client.force_login(member)
    page = client.get(f"/catalog/tools/{orders.pk}/").content.decode()
    assert page.count('data-change="prompt-unknown"') == 1
    part = client.get(f"/catalog/tools/{orders.pk}/versions/2/diff/").content.decode()
    assert "v1 was recorded before prompts were versioned" in _text(part)
    # Rollback to such a version restores its code and keeps today's prompt, saying so.
    tool_update(tool=orders, source=SOURCE.replace("'limit': limit", "'n': limit"))
    change = tool_rollback(tool=orders, version=orders.versions.get(number=1))
    orders.refresh_from_db()
    assert orders.source == SOURCE and orders.description == SECOND
    assert "before prompts were versioned" in change.remarks[0]


# Through the web form, as a logged-in member


def test_the_tool_form_versions_a_prompt_edit_diffs_and_rolls_it_back(
    browser, orders, built
) -> None:
    checksum = orders.checksum
    edit = f"/catalog/tools/{orders.pk}/edit/"
    for number, (description, note) in enumerate(
        [(SECOND, "newest first"), (THIRD, "recent")], start=2
    ):
        response = browser.post(edit, _form(orders, description=description, note=note))
        assert response.status_code == 302
        assert any(
            f"Saved find_orders as v{number}" in m and "no image rebuild" in m
            for m in _messages(response)
        )
    page = browser.get(f"/catalog/tools/{orders.pk}/").content.decode()
    assert "newest first" in page and "recent" in page
    assert 'data-change="prompt"' in page and 'data-change="code"' not in page
    part = _text(browser.get(f"/catalog/tools/{orders.pk}/versions/3/diff/").content.decode())
    assert f"-<description>{SECOND}</description>" in part
    assert f"+<description>{THIRD}</description>" in part
    assert "No change in code or dependencies." in part
    against = _text(
        browser.get(f"/catalog/tools/{orders.pk}/versions/3/diff/?against=1").content.decode()
    )
    assert f"-<description>{FIRST}</description>" in against and "against v1" in against
    for target, description in ((1, FIRST), (2, SECOND)):
        response = browser.post(f"/catalog/tools/{orders.pk}/versions/{target}/rollback/")
        assert response.status_code == 302
        orders.refresh_from_db()
        assert orders.description == description
        assert any(f"Rolled find_orders back to v{target}" in m for m in _messages(response))
    assert orders.versions.count() == 5 and orders.checksum == checksum
    assert sandbox_image_status(orders.sandbox).code == "up_to_date"
    page = _text(browser.get(f"/catalog/tools/{orders.pk}/").content.decode())
    assert f"<description>{SECOND}</description>" in page


def test_the_tool_form_says_when_nothing_changed(browser, orders) -> None:
    response = browser.post(f"/catalog/tools/{orders.pk}/edit/", _form(orders, note="noop"))
    assert response.status_code == 302
    assert _messages(response) == ["Nothing changed: no new version."]
    assert orders.versions.count() == 1


def test_the_tool_form_versions_a_parameter_default_edit(browser, orders) -> None:
    params = [PARAMS[0], {**PARAMS[1], "default": 50}]
    response = browser.post(
        f"/catalog/tools/{orders.pk}/edit/",
        _form(orders, parameters=json.dumps(params), note="bigger pages"),
    )
    assert response.status_code == 302
    version = orders.versions.get(number=2)
    assert version.note == "bigger pages" and "<default>50</default>" in version.prompt


# Through the import paths


OPS = """
from jazzmine.core.tools import ToolParameter, ToolResponse, tool


@tool(
    description="{description}",
    parameters=[ToolParameter("host", "str", "{param}", required=True)],
    sandbox="ops",
)
def ping(host: str) -> ToolResponse:
    return ToolResponse(success=True, data=host)
"""


def _ops(description: str = "Ping a host.", param: str = "The host.") -> str:
    return OPS.format(description=description, param=param)


def test_a_web_import_that_changes_only_the_prompt_is_a_version(browser, team) -> None:
    def upload(text: str):
        file = SimpleUploadedFile("ops.py", text.encode(), content_type="text/x-python")
        return browser.post("/catalog/import/", {"team": team.pk, "files": [file]})

    assert upload(_ops()).status_code == 200
    ping = Tool.objects.get(name="ping")
    checksum = ping.checksum
    response = upload(_ops(param="The host name or address."))
    assert "Changed (new version): ping" in response.content.decode()
    version = ping.versions.get(number=2)
    assert version.note == "Imported from ops.py" and version.checksum == checksum
    assert "The host name or address." in version.prompt
    response = upload(_ops(param="The host name or address."))
    assert "Unchanged: ping" in response.content.decode() and ping.versions.count() == 2


def test_the_import_command_versions_a_description_edit(team, user, tmp_path) -> None:
    tools_import(team=team, files=[source_file("ops.py", _ops())], author=user)
    path = tmp_path / "ops.py"
    path.write_text(_ops(description="Ping one host once."))
    call_command("import_tools", str(path), "--team", team.slug, stdout=None)
    ping = Tool.objects.get(name="ping")
    assert ping.versions.count() == 2
    assert "Ping one host once." in ping.versions.get(number=2).prompt


# Script tools: their tool.json is the prompt


def test_a_script_tools_parameter_description_edit_is_a_version(empty_sandbox, user) -> None:
    def script_tool(description: str) -> ScriptTool:
        return ScriptTool(
            name="fetch_weather",
            description="Fetch the weather of a city; use it when asked about the weather.",
            source="import json, sys\nprint(json.dumps(json.load(sys.stdin)))\n",
            parameters={
                "type": "object",
                "properties": {"city": {"type": "string", "description": description}},
                "required": ["city"],
            },
            runtime="python3",
        )

    tool, _ = script_tool_save(sandbox=empty_sandbox, tool=script_tool("The city."), author=user)
    checksum = tool.checksum
    _, change = script_tool_save(
        sandbox=empty_sandbox,
        tool=script_tool("The city, e.g. Paris."),
        existing=tool,
        author=user,
        note="example city",
    )
    assert change.new_version.number == 2 and change.new_version.note == "example city"
    assert change.prompt_changed and not change.code_changed
    assert tool.checksum == checksum and "e.g. Paris" in change.new_version.prompt
    change = tool_rollback(tool=tool, version=tool.versions.get(number=1))
    tool.refresh_from_db()
    assert change.new_version.number == 3 and "e.g. Paris" not in change.new_version.prompt


def test_an_admin_site_edit_of_the_description_is_a_version(client, team_admin, orders) -> None:
    team_admin.is_superuser = team_admin.is_staff = True
    team_admin.save()
    client.force_login(team_admin)
    version = orders.versions.get()
    data = {
        "sandbox": orders.sandbox_id, "name": orders.name, "description": SECOND,
        "parameters": json.dumps(orders.parameters), "dependencies": "[]", "secrets": "[]",
        "kind": "python", "source": orders.source, "tags": "[]",
        "versions-TOTAL_FORMS": 1, "versions-INITIAL_FORMS": 1,
        "versions-0-id": version.pk, "versions-0-tool": orders.pk,
    }  # fmt: skip
    response = client.post(f"/admin/catalog/tool/{orders.pk}/change/", data)
    assert response.status_code == 302
    latest = orders.versions.get(number=2)
    assert latest.note == "Edited in admin" and SECOND in latest.prompt
    assert latest.checksum == version.checksum
