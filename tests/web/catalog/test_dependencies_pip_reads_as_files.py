"""A dependency whose version ends like an archive (`foo==1.0+a.zip`, which pip reads as a file
path) is refused in every entry path, and a sandbox profile's dependencies given as a dict are
refused instead of being stored as its keys."""

from __future__ import annotations

import html
import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Sandbox, Tool
from jazzmine_web.catalog.services import tools_import
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db

PATHS_TO_PIP = ["foo==1.0+a.zip", "foo!=1.0+a.tar.gz", "foo[x]==1+a.whl; python_version>'3'"]
PING = "def ping(host):\n    return ToolResponse(success=True)\n"
REASON = "ends like an archive file name"


def _page(response) -> str:
    return html.unescape(response.content.decode())


@pytest.mark.parametrize("bad", PATHS_TO_PIP)
def test_the_tool_form_refuses_it(client, member, empty_sandbox, bad: str) -> None:
    client.force_login(member)
    data = {"name": "ping", "description": "Ping a host.", "kind": "python", "source": PING,
            "dependencies": f"httpx\n{bad}"}  # fmt: skip
    response = client.post(f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/", data)
    assert response.status_code == 422
    assert "line 2:" in _page(response) and REASON in _page(response)
    assert not Tool.objects.exists()


@pytest.mark.parametrize("bad", PATHS_TO_PIP)
def test_the_sandbox_form_refuses_it(client, team_admin, empty_sandbox, bad: str) -> None:
    client.force_login(team_admin)
    data = {
        "name": "scratch", "memory_mb": 256, "cpus": 1, "pids_limit": 128, "timeout_seconds": 30,
        "max_output_bytes": 1_000_000, "base_image": "jazzmine/base:bookworm",
        "backend": "docker", "dependencies": f"{bad}\nrich",
    }  # fmt: skip
    response = client.post(f"/catalog/sandboxes/{empty_sandbox.pk}/edit/", data)
    assert response.status_code == 422 and REASON in _page(response)
    empty_sandbox.refresh_from_db()
    assert empty_sandbox.dependencies == []


@pytest.mark.parametrize("bad", PATHS_TO_PIP)
def test_a_tool_json_upload_refuses_it(client, member, empty_sandbox, bad: str) -> None:
    client.force_login(member)
    tool_json = {"name": "echo", "description": "Echo the input back for tests.",
                 "parameters": {"type": "object", "properties": {}},
                 "dependencies": ["httpx", bad]}  # fmt: skip
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("echo/tool.json", json.dumps(tool_json))
        archive.writestr("echo/script.py", "print('{}')\n")
    upload = SimpleUploadedFile("tools.zip", buffer.getvalue(), content_type="application/zip")
    response = client.post(
        "/catalog/script-tools/import/", {"sandbox": empty_sandbox.pk, "archive": upload}
    )
    assert response.status_code == 422 and REASON in _page(response)
    assert not Tool.objects.exists()


@pytest.mark.parametrize("bad", PATHS_TO_PIP)
def test_a_py_import_refuses_it(team, user, bad: str) -> None:
    text = f"@tool('Ping a host.', dependencies=['httpx', {bad!r}], sandbox='net')\n" + PING
    with pytest.raises(ImportRefused, match=REASON):
        tools_import(team=team, files=[source_file("ping.py", text)], author=user)
    assert not Tool.objects.exists() and not Sandbox.objects.exists()


@pytest.mark.parametrize(
    "dependencies",
    ['{"requests": "==2.0"}', '{"requests": "==2.0", "rich": ">=13"}', '"requests==2.0"'],
    ids=["dict", "dict of two", "one string"],
)
def test_a_py_import_refuses_sandbox_dependencies_that_are_not_a_list(
    team, user, dependencies: str
) -> None:
    text = f"register_sandbox(SandboxConfig(name='net', dependencies={dependencies}))\n"
    with pytest.raises(ImportRefused, match="give a list of requirement strings"):
        tools_import(team=team, files=[source_file("net.py", text)], author=user)
    assert not Sandbox.objects.exists()
