"""A tool's form and service say every problem they find at once, not the first alone.

A person fixed a form's bad dependency, saved, and only then learnt that the source did not
parse; then that the description was too long: one round trip per problem.
"""

from __future__ import annotations

import html

import pytest
from django.core.exceptions import ValidationError

from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import tool_create

pytestmark = pytest.mark.django_db

BROKEN = "def ping(host: str) -> ToolResponse:\n    return ToolResponse(success=True\n"
GOOD = "def ping(host: str) -> ToolResponse:\n    return ToolResponse(success=True)\n"
NOT_A_REQUIREMENT = "line 2: '--index-url http://evil/' is not a plain requirement"
UNPARSED = "invalid Python syntax at line 2"


def test_the_form_says_a_bad_dependency_and_a_broken_source_together(
    client, member, empty_sandbox
) -> None:
    client.force_login(member)
    data = {
        "name": "ping", "description": "Ping a host.", "kind": "python", "source": BROKEN,
        "dependencies": "httpx\n--index-url http://evil/",
    }  # fmt: skip
    for _ in range(2):  # and posted again unchanged
        response = client.post(f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/", data)
        assert response.status_code == 422
        page = html.unescape(response.content.decode())
        assert NOT_A_REQUIREMENT in page and UNPARSED in page
    # Each fixed in turn: what is left is said alone, then the tool is made.
    data["dependencies"] = "httpx"
    response = client.post(f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/", data)
    page = html.unescape(response.content.decode())
    assert response.status_code == 422 and UNPARSED in page and NOT_A_REQUIREMENT not in page
    data["source"] = GOOD
    response = client.post(f"/catalog/sandboxes/{empty_sandbox.pk}/tools/new/", data)
    assert response.status_code == 302
    assert Tool.objects.filter(sandbox=empty_sandbox, name="ping").exists()


def test_the_service_says_each_fields_problem_and_the_sources(empty_sandbox, team_admin) -> None:
    with pytest.raises(ValidationError) as refused:
        tool_create(
            sandbox=empty_sandbox, name="ping", description="x" * 9_000, source=BROKEN,
            dependencies=["httpx", "--index-url http://evil/"], secrets=["GOOD", ""],
            author=team_admin, actor=team_admin,
        )  # fmt: skip
    said = refused.value.messages
    assert len(said) == 4, said
    assert any("the description" in m and "8,000" in m for m in said), said
    assert any(NOT_A_REQUIREMENT in m for m in said), said
    assert any("secrets[1] must be a name" in m for m in said), said
    assert any(UNPARSED in m for m in said), said
    assert not Tool.objects.exists()
