"""Script tools come in and go out as `<tool_name>/{tool.json, script.py}`: zip or folder."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from jazzmine.scripttools import load_tool_dir, load_zip
from jazzmine_web.catalog.models import Tool, ToolKind
from tests.scripttools.samples import PRICES, RSI
from tests.scripttools.unreadable_zips import zip_of

from .conftest import tool_json


@pytest.fixture(autouse=True)
def member_is_admin(member, sandbox):
    """The fixtures' tool.json files say always_allow: only a team admin may import that."""
    from jazzmine_web.teams.models import Role
    from jazzmine_web.teams.services import membership_set

    membership_set(team=sandbox.team, user=member, role=Role.ADMIN)


def _upload(client, sandbox, data: bytes, name: str = "tools.zip"):
    return client.post(
        reverse("scripttools:import"),
        {"sandbox": sandbox.pk, "archive": SimpleUploadedFile(name, data)},
    )


def _folder_zip(*folders) -> bytes:
    files = {}
    for folder in folders:
        for path in folder.iterdir():
            files[f"{folder.name}/{path.name}"] = path.read_text()
    return zip_of(files)


def test_it_imports_a_zip_of_tool_folders_as_unpublished_script_tools(
    client, member, sandbox
) -> None:
    client.force_login(member)
    response = _upload(client, sandbox, _folder_zip(RSI, PRICES))
    assert response.status_code == 200
    assert b"created: calculate_rsi, summarize_prices" in response.content
    rsi = Tool.objects.get(sandbox=sandbox, name="calculate_rsi")
    assert rsi.kind == ToolKind.SCRIPT and rsi.runtime == "python3" and not rsi.published
    assert rsi.source == (RSI / "script.py").read_text()
    assert rsi.schema == tool_json(RSI)["parameters"]
    assert rsi.always_allow is True
    prices = Tool.objects.get(sandbox=sandbox, name="summarize_prices")
    assert prices.runtime == "node"
    # Each tool page names its own script (a node tool's said script.py).
    for tool, script in ((rsi, "script.py"), (prices, "script.js")):
        page = client.get(f"/catalog/tools/{tool.pk}/").content.decode()
        assert f"Script tool (tool.json + {script})" in page
    assert rsi.versions.count() == 1 and rsi.versions.get().tool_json["tool.json"]["name"]


def test_reimporting_the_same_zip_changes_nothing(client, member, sandbox) -> None:
    client.force_login(member)
    _upload(client, sandbox, _folder_zip(RSI))
    response = _upload(client, sandbox, _folder_zip(RSI))
    assert b"unchanged: calculate_rsi" in response.content
    assert Tool.objects.get(name="calculate_rsi").versions.count() == 1


def test_a_broken_zip_imports_nothing_and_names_the_file(client, member, sandbox) -> None:
    client.force_login(member)
    data = zip_of(
        {
            "calculate_rsi/tool.json": (RSI / "tool.json").read_text(),
            "calculate_rsi/script.py": (RSI / "script.py").read_text(),
            "broken/tool.json": "{not json",
            "broken/script.py": "print(1)\n",
        }
    )
    response = _upload(client, sandbox, data)
    assert response.status_code == 422
    assert b"broken/tool.json" in response.content
    assert not Tool.objects.filter(sandbox=sandbox).exists()


def test_the_sandbox_export_gives_back_the_imported_layout(client, member, sandbox) -> None:
    client.force_login(member)
    _upload(client, sandbox, _folder_zip(RSI, PRICES))
    response = client.get(reverse("scripttools:export", args=[sandbox.pk]))
    assert response["Content-Type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(response.content)).namelist()
    assert sorted(names) == [
        "calculate_rsi/script.py",
        "calculate_rsi/tool.json",
        "summarize_prices/script.js",
        "summarize_prices/tool.json",
    ]
    exported = {t.name: t for t in load_zip(response.content)}
    assert exported["calculate_rsi"].to_json_dict() == load_tool_dir(RSI).to_json_dict()
    assert exported["calculate_rsi"].source == load_tool_dir(RSI).source


def test_the_commands_import_a_folder_and_export_it_again(sandbox, member, tmp_path) -> None:
    call_command("scripttools_import", str(RSI.parent), team="shop", sandbox="quant", author="ada")
    assert set(sandbox.tools.values_list("name", flat=True)) == {
        "calculate_rsi",
        "summarize_prices",
    }
    call_command("scripttools_export", str(tmp_path), team="shop", sandbox="quant")
    again = load_tool_dir(tmp_path / "calculate_rsi")
    assert again.to_json_dict() == load_tool_dir(RSI).to_json_dict()
    assert (tmp_path / "summarize_prices" / "script.js").read_text() == (
        PRICES / "script.js"
    ).read_text()


def test_the_import_command_refuses_an_unknown_sandbox(team) -> None:
    with pytest.raises(CommandError, match="No sandbox"):
        call_command("scripttools_import", str(RSI), team="shop", sandbox="nope")
