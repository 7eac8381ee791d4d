from __future__ import annotations

import html as htmllib
import re
import uuid

import pytest

from jazzmine_web.catalog.models import Sandbox, Tool
from jazzmine_web.catalog.services import registry_for_sandbox, tool_update

pytestmark = pytest.mark.django_db


def test_the_tool_page_shows_interface_exact_xml_source_and_versions(
    client, member, ecommerce
) -> None:
    client.force_login(member)
    tool = ecommerce.tools.get(name="get_user")
    tool_update(tool=tool, source=tool.source.replace("Ada Lovelace", "Ada King"), note="rename")
    html = client.get(f"/catalog/tools/{tool.pk}/").content.decode()
    xml = registry_for_sandbox(ecommerce).get_tool("ecommerce", "get_user").tool.build_prompt()
    text = htmllib.unescape(_strip_tags(html))
    assert xml.splitlines()[0] in text and "<display_name>Customer</display_name>" in text
    assert "Fetch one customer&#x27;s profile" in html or "Fetch one customer's profile" in html
    assert "<td><code>user_id</code></td>" in html
    assert "v2" in html and "rename" in html
    tool.refresh_from_db()
    assert tool.checksum in html
    # Roll back asks first, as Delete does: it replaces the code at one click.
    rollback = re.search(
        r'<form method="post" action="[^"]*/rollback/[^"]*" data-confirm="([^"]+)"', html
    )
    assert rollback is not None and "Roll get_user back to v1?" in htmllib.unescape(rollback[1])


def test_a_version_diff_renders_as_a_partial(client, member, ecommerce) -> None:
    client.force_login(member)
    tool = ecommerce.tools.get(name="get_user")
    tool_update(tool=tool, source=tool.source.replace("Ada Lovelace", "Ada King"))
    html = client.get(f"/catalog/tools/{tool.pk}/versions/2/diff/").content.decode()
    assert html.lstrip().startswith('<div id="version-diff">')
    assert "Ada King" in html and "Ada Lovelace" in html


def test_the_sandbox_page_aggregates_needs_and_shows_image_status(
    client, member, ecommerce
) -> None:
    client.force_login(member)
    # Code no engine has ever built: whatever images exist, none is of this code.
    tool = ecommerce.tools.get(name="get_user")
    tool_update(tool=tool, source=tool.source.replace("Ada Lovelace", f"Ada {uuid.uuid4().hex}"))
    html = client.get(f"/catalog/sandboxes/{ecommerce.pk}/").content.decode()
    assert registry_for_sandbox(ecommerce).sandbox_checksum("ecommerce") in html
    assert 'id="secret-MAIL_API_TOKEN"' in html and "not set" in html
    badge = re.search(r'id="image-status-badge" class="badge badge-(\w+)"', html)
    assert badge is not None and badge[1] in ("needs_rebuild", "never_built")
    assert ">Build</button>" in html


def test_the_sandbox_page_leads_to_its_review_policy(client, member, ecommerce) -> None:
    # The README sends people to the policy page; no page linked to it.
    client.force_login(member)
    html = client.get(f"/catalog/sandboxes/{ecommerce.pk}/").content.decode()
    link = re.search(r'id="review-policy" href="([^"]+)"', html)
    assert link is not None and link[1] == f"/reviews/sandboxes/{ecommerce.pk}/policy/"
    assert client.get(link[1]).status_code == 200


def test_the_sandbox_form_creates_and_validates(client, team_admin, team) -> None:
    client.force_login(team_admin)
    data = {
        "team": team.pk, "name": "Bad Name", "memory_mb": 128, "cpus": 0.5, "pids_limit": 64,
        "timeout_seconds": 5, "max_output_bytes": 1000, "base_image": "jazzmine/base:bookworm",
        "backend": "docker", "dependencies": "httpx\nrich", "secrets": "API_KEY",
    }  # fmt: skip
    response = client.post("/catalog/sandboxes/new/", data)
    assert response.status_code == 422 and "must be lowercase letters" in response.content.decode()
    data["name"] = "good-one"
    response = client.post("/catalog/sandboxes/new/", data)
    sandbox = Sandbox.objects.get(name="good-one")
    assert response["Location"] == f"/catalog/sandboxes/{sandbox.pk}/"
    assert sandbox.dependencies == ["httpx", "rich"] and sandbox.memory_mb == 128


def test_the_tool_form_refuses_what_the_core_refuses_and_saves_a_version(
    client, member, ecommerce
) -> None:
    client.force_login(member)
    url = f"/catalog/sandboxes/{ecommerce.pk}/tools/new/"
    data = {
        "name": "ping", "description": "Ping.", "kind": "python", "tags": "net, Ops",
        "parameters": '[{"name": "host", "type": "str", "required": true}]',
        "source": "def ping(host):\n    return ToolResponse(success=True)\n",
    }  # fmt: skip
    bad = client.post(
        url, {**data, "parameters": '[{"name": "host", "type": "str", "source": "web"}]'}
    )
    assert "source must be one of" in htmllib.unescape(bad.content.decode())
    assert bad.status_code == 422  # refused: htmx swaps it in place, errors and typed text
    bad = client.post(url, {**data, "source": "def ping(:\n"})
    assert bad.status_code == 422 and "syntax" in bad.content.decode()
    assert "def ping(:" in htmllib.unescape(bad.content.decode())
    response = client.post(url, data)
    tool = Tool.objects.get(name="ping")
    assert response["Location"] == f"/catalog/tools/{tool.pk}/"
    assert tool.tags == ["net", "ops"] and tool.versions.count() == 1
    edit = client.post(
        f"/catalog/tools/{tool.pk}/edit/",
        {**data, "tags": "net, ops", "dependencies": "httpx", "note": "add httpx"},
    )
    assert edit.status_code == 302
    assert tool.versions.first().note == "add httpx"


def test_the_export_downloads_a_python_module(client, member, ecommerce) -> None:
    client.force_login(member)
    response = client.get(f"/catalog/sandboxes/{ecommerce.pk}/export.py")
    assert response["Content-Disposition"] == 'attachment; filename="ecommerce.py"'
    assert b"registry.register_sandbox(" in response.content


def _strip_tags(html: str) -> str:
    import re

    return re.sub(r"<[^>]+>", "", html)
