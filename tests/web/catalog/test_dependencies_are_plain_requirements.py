"""Dependencies are PEP 508 requirements in every entry path; pip options, URLs, paths never."""

from __future__ import annotations

import html
import io
import json
import zipfile

import pytest
from django.core.exceptions import ValidationError

from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import Sandbox, Tool
from jazzmine_web.catalog.services import sandbox_create, tool_create, tools_import
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db

ATTACKS = [
    " -r /etc/passwd",
    "--log=/tmp/x",
    "-rrequirements.txt",
    "numpy --index-url http://x",
    "numpy;--log x",
    "numpy\t-r /etc/passwd",
    "\u2010r /etc/passwd",
    "pkg @ file:///etc",
    "pkg@https://evil.example/pkg.whl",
    "../evil",
    "./local-dir",
    "/abs/path",
    "file:/etc/passwd",
    "x==1 -i http://y",
    "git+https://example.com/x.git",
    "-c constraints.txt",
    "--dest=/tmp",
    "--find-links /tmp",
    "-e .",
    "requests[security]; os_name == '--log'",
    "evil.tar.gz",
    "x===/etc/passwd",
]
# The web forms cost a request each: a spread of the spellings, every one through the services.
WEB_ATTACKS = [ATTACKS[i] for i in (0, 1, 4, 5, 6, 7, 9, 13, 19)]
PING = "def ping(host):\n    return ToolResponse(success=True)\n"


def _page(response) -> str:
    return html.unescape(response.content.decode())


@pytest.mark.parametrize("bad", WEB_ATTACKS)
def test_the_tool_form_refuses_a_dependency_that_is_not_a_requirement(
    client, member, empty_sandbox, bad
) -> None:
    client.force_login(member)
    data = {
        "name": "ping", "description": "Ping a host.", "kind": "python", "source": PING,
        "dependencies": f"httpx\n{bad}",
    }  # fmt: skip
    response = client.post(f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/", data)
    assert response.status_code == 422
    assert "line 2:" in _page(response) and "is not a plain requirement" in _page(response)
    assert not Tool.objects.exists()


@pytest.mark.parametrize("bad", WEB_ATTACKS)
def test_the_sandbox_form_refuses_a_dependency_that_is_not_a_requirement(
    client, team_admin, empty_sandbox, bad
) -> None:
    client.force_login(team_admin)
    data = {
        "name": "scratch", "memory_mb": 256, "cpus": 1, "pids_limit": 128, "timeout_seconds": 30,
        "max_output_bytes": 1_000_000, "base_image": "jazzmine/base:bookworm",
        "backend": "docker", "dependencies": f"{bad}\nrich",
    }  # fmt: skip
    response = client.post(f"/catalog/sandboxes/{empty_sandbox.pk}/edit/", data)
    assert response.status_code == 422 and "line 1:" in _page(response)
    empty_sandbox.refresh_from_db()
    assert empty_sandbox.dependencies == []


def test_a_newline_hidden_in_a_requirement_is_its_own_line_and_is_refused(
    client, member, empty_sandbox
) -> None:
    client.force_login(member)
    data = {"name": "ping", "description": "Ping.", "kind": "python", "source": PING,
            "dependencies": "numpy\r\n-r /etc/passwd"}  # fmt: skip
    response = client.post(f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/", data)
    assert "line 2:" in _page(response) and not Tool.objects.exists()


def test_a_version_range_with_a_comma_stays_one_requirement(client, member, empty_sandbox) -> None:
    client.force_login(member)
    data = {"name": "ping", "description": "Ping.", "kind": "python", "source": PING,
            "dependencies": "numpy>=1.2,<2\npandas; python_version >= \"3.8\""}  # fmt: skip
    client.post(f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/", data)
    assert Tool.objects.get().dependencies == ["numpy>=1.2,<2", 'pandas; python_version >= "3.8"']


@pytest.mark.parametrize("bad", ATTACKS)
def test_a_py_import_refuses_a_tool_whose_dependencies_are_not_requirements(
    team, user, bad
) -> None:
    text = (
        "from jazzmine.core.tools import tool\n\n"
        f"@tool('Ping a host.', dependencies=['httpx', {bad!r}], sandbox='net')\n"
        "def ping(host):\n    return ToolResponse(success=True)\n"
    )
    with pytest.raises(ImportRefused) as refused:
        tools_import(team=team, files=[source_file("ping.py", text)], author=user)
    assert "dependencies line 2" in str(refused.value)
    assert not Tool.objects.exists() and not Sandbox.objects.exists()


def test_a_py_import_refuses_a_sandbox_profile_with_pip_options(team, user) -> None:
    text = (
        "from jazzmine.core.tools import SandboxConfig, register_sandbox\n"
        "register_sandbox(SandboxConfig(name='net', dependencies=['--log=/tmp/x']))\n"
    )
    with pytest.raises(ImportRefused, match="dependencies line 1"):
        tools_import(team=team, files=[source_file("net.py", text)], author=user)


@pytest.mark.parametrize("bad", WEB_ATTACKS)
def test_a_tool_json_upload_refuses_dependencies_that_are_not_requirements(
    client, member, empty_sandbox, bad
) -> None:
    client.force_login(member)
    tool_json = {"name": "echo", "description": "Echo the input back for tests.",
                 "parameters": {"type": "object", "properties": {}},
                 "dependencies": ["httpx", bad]}  # fmt: skip
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("echo/tool.json", json.dumps(tool_json))
        archive.writestr("echo/script.py", "print('{}')\n")
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("tools.zip", buffer.getvalue(), content_type="application/zip")
    response = client.post(
        "/catalog/script-tools/import/", {"sandbox": empty_sandbox.pk, "archive": upload}
    )
    assert response.status_code == 422
    assert "dependencies line 2" in _page(response)
    assert not Tool.objects.exists()


@pytest.mark.parametrize("bad", ATTACKS)
def test_the_services_refuse_them_too_whoever_calls(team, empty_sandbox, bad) -> None:
    with pytest.raises(ValidationError, match="not a plain requirement"):
        tool_create(sandbox=empty_sandbox, name="ping", description="Ping.", source=PING,
                    dependencies=[bad])  # fmt: skip
    with pytest.raises(ValidationError, match="not a plain requirement"):
        sandbox_create(team=team, name="other", dependencies=[bad])
