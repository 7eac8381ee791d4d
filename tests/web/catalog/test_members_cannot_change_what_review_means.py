"""Members edit ordinary tools; whatever changes review or a run's reach is for team admins."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from jazzmine_web.catalog.importer import ImportRefused
from jazzmine_web.catalog.models import SecretValue, Tool
from jazzmine_web.catalog.services import tool_create, tools_import
from tests.web.helpers import source_file

pytestmark = pytest.mark.django_db

PING = "def ping(host):\n    return ToolResponse(success=True)\n"


@pytest.fixture
def ping(empty_sandbox):
    return tool_create(sandbox=empty_sandbox, name="ping", description="Ping.", source=PING)


def _tool_post(**changes):
    data = {"name": "ping", "description": "Ping a host.", "kind": "python", "source": PING}
    return {**data, **changes}


def test_a_member_edits_the_description_and_code_of_an_ordinary_tool(client, member, ping) -> None:
    client.force_login(member)
    code = PING.replace("True)", "True )")
    response = client.post(f"/catalog/tools/{ping.pk}/edit/", _tool_post(source=code))
    assert response.status_code == 302
    ping.refresh_from_db()
    assert ping.description == "Ping a host." and ping.versions.count() == 2


def test_a_member_posting_always_allow_and_secrets_to_the_tool_form_changes_neither(
    client, member, ping
) -> None:
    client.force_login(member)
    post = _tool_post(always_allow="on", secrets="STRIPE_KEY")
    client.post(f"/catalog/tools/{ping.pk}/edit/", post)
    client.post(f"/catalog/sandboxes/{ping.sandbox_id}/tools/new/", {**post, "name": "pong"})
    for tool in Tool.objects.all():
        assert (tool.always_allow, tool.secrets, tool.is_always_allowed) == (False, [], False)


def test_a_member_posting_admin_fields_to_the_sandbox_form_changes_none_of_them(
    client, member, empty_sandbox
) -> None:
    client.force_login(member)
    data = {
        "name": "scratch", "description": "mine now", "network": "on", "memory_mb": 4096,
        "cpus": 4, "pids_limit": 1024, "timeout_seconds": 600, "max_output_bytes": 50_000_000,
        "base_image": "jazzmine/base:bookworm", "backend": "bwrap", "secrets": "AWS_KEY",
        "bash_max_commands": 99, "bash_max_loop_iterations": 99, "bash_timeout_seconds": 99,
    }  # fmt: skip
    response = client.post(f"/catalog/sandboxes/{empty_sandbox.pk}/edit/", data)
    assert response.status_code == 302
    empty_sandbox.refresh_from_db()
    assert empty_sandbox.description == "mine now"
    assert (empty_sandbox.network, empty_sandbox.memory_mb, empty_sandbox.backend) == (
        False, 256, "docker",
    )  # fmt: skip
    assert empty_sandbox.secrets == [] and empty_sandbox.bash_max_commands == 10_000


def test_an_admin_changes_them_through_the_same_form(client, team_admin, empty_sandbox) -> None:
    client.force_login(team_admin)
    data = {
        "name": "scratch", "network": "on", "memory_mb": 512, "cpus": 1, "pids_limit": 128,
        "timeout_seconds": 30, "max_output_bytes": 1_000_000,
        "base_image": "jazzmine/base:bookworm", "backend": "docker",
    }  # fmt: skip
    assert client.post(f"/catalog/sandboxes/{empty_sandbox.pk}/edit/", data).status_code == 302
    empty_sandbox.refresh_from_db()
    assert empty_sandbox.network is True and empty_sandbox.memory_mb == 512


def test_a_member_cannot_set_or_clear_a_secret_value(client, member, ecommerce) -> None:
    client.force_login(member)
    url = f"/catalog/sandboxes/{ecommerce.pk}/secrets/"
    assert client.post(url, {"name": "MAIL_API_TOKEN", "value": "x"}).status_code == 403
    SecretValue.objects.create(sandbox=ecommerce, name="MAIL_API_TOKEN", ciphertext="c")
    assert client.post(url, {"name": "MAIL_API_TOKEN", "clear": "1"}).status_code == 403
    assert SecretValue.objects.filter(name="MAIL_API_TOKEN").exists()


def test_a_member_cannot_delete_a_tool_and_its_history(client, member, ping) -> None:
    client.force_login(member)
    assert client.post(f"/catalog/tools/{ping.pk}/delete/").status_code == 403
    assert Tool.objects.filter(pk=ping.pk).exists()


def test_a_member_cannot_roll_always_allow_back_on(client, member, team_admin, ping) -> None:
    from jazzmine_web.catalog.services import tool_update

    tool_update(tool=ping, always_allow=True, actor=team_admin)
    tool_update(tool=ping, always_allow=False, actor=team_admin)
    client.force_login(member)
    response = client.post(f"/catalog/tools/{ping.pk}/versions/2/rollback/", follow=True)
    assert "Only team admins" in response.content.decode()
    ping.refresh_from_db()
    assert ping.always_allow is False


def test_a_py_import_with_always_allow_is_refused(client, member, team) -> None:
    client.force_login(member)
    text = "@tool('Ping.', always_allow=True)\ndef ping(host):\n    return 1\n"
    upload = SimpleUploadedFile("ping.py", text.encode(), content_type="text/x-python")
    response = client.post("/catalog/import/", {"team": team.pk, "files": [upload]})
    assert response.status_code == 422 and not Tool.objects.exists()


def test_a_members_py_import_declaring_secrets_is_refused(team, member) -> None:
    text = "@tool('Ping.', secrets=['STRIPE_KEY'], sandbox='net')\ndef ping(host):\n    return 1\n"
    with pytest.raises(ImportRefused, match="Only team admins change secrets"):
        tools_import(team=team, files=[source_file("p.py", text)], author=member, actor=member)


def _zip(tool_json: dict) -> SimpleUploadedFile:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{tool_json['name']}/tool.json", json.dumps(tool_json))
        archive.writestr(f"{tool_json['name']}/script.py", "print('{}')\n")
    return SimpleUploadedFile("t.zip", buffer.getvalue(), content_type="application/zip")


def test_a_members_tool_json_upload_with_always_allow_is_refused(
    client, member, empty_sandbox
) -> None:
    client.force_login(member)
    tool_json = {"name": "echo", "description": "Echo the input back for tests.",
                 "always_allow": True, "parameters": {"type": "object", "properties": {}}}  # fmt: skip
    response = client.post(
        "/catalog/script-tools/import/", {"sandbox": empty_sandbox.pk, "archive": _zip(tool_json)}
    )
    assert response.status_code == 422 and "Only team admins" in response.content.decode()
    assert not Tool.objects.exists()


def test_the_script_tool_form_ignores_a_members_always_allow(client, member, empty_sandbox) -> None:
    client.force_login(member)
    data = {"name": "echo", "description": "Echo the input back for tests.", "runtime": "python3",
            "timeout": 30, "parameters": '{"type": "object", "properties": {}}',
            "source": "print('{}')\n", "always_allow": "on", "secrets": "STRIPE_KEY"}  # fmt: skip
    client.post(f"/catalog/sandboxes/{empty_sandbox.pk}/script-tools/new/", data)
    tool = Tool.objects.get()
    assert (tool.always_allow, tool.secrets) == (False, [])


def test_the_read_api_has_no_way_to_write(client, member, ping) -> None:
    from jazzmine_web.teams.services import api_token_create

    raw = api_token_create(user=member, name="agent").raw
    headers = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}
    url = f"/api/v1/sandboxes/{ping.sandbox_id}/tools/"
    body = json.dumps({"tools": [{"name": "ping", "always_allow": True}]})
    for method in (client.post, client.put, client.patch):
        response = method(url, body, content_type="application/json", **headers)
        assert response.status_code == 405
    tool = client.get(url, **headers).json()["tools"][0]
    assert tool["always_allow"] is False
    ping.refresh_from_db()
    assert ping.always_allow is False


def test_a_staff_member_who_is_no_team_admin_cannot_use_the_admin_site_as_a_side_door(
    client, member, ping
) -> None:
    member.is_staff = True
    member.save()
    from django.contrib.auth.models import Permission

    member.user_permissions.add(*Permission.objects.filter(content_type__app_label="catalog"))
    client.force_login(member)
    data = {"sandbox": ping.sandbox_id, "name": "ping", "description": "Ping.",
            "parameters": "[]", "dependencies": "[]", "secrets": "[]", "kind": "python",
            "source": PING, "always_allow": "on", "tags": "[]"}  # fmt: skip
    version = ping.versions.get()
    data.update({"versions-TOTAL_FORMS": 1, "versions-INITIAL_FORMS": 1,
                 "versions-0-id": version.pk, "versions-0-tool": ping.pk})  # fmt: skip
    response = client.post(f"/admin/catalog/tool/{ping.pk}/change/", data)
    errors = response.context["adminform"].form.errors if response.status_code == 200 else None
    assert response.status_code == 403, errors
    ping.refresh_from_db()
    assert ping.always_allow is False
