"""A sandbox holds at most `JAZZMINE_MAX_TOOLS_PER_SANDBOX` tools, however they are made.

Every run's claim reads all of a sandbox's tools and every prompt lists them: a member's loop
that created tools slowed every run of the sandbox, and its LLM prompts, without end.
"""

from __future__ import annotations

import html

import pytest
from django.core.exceptions import ValidationError

from jazzmine_web.catalog.importer import ImportRefused, SourceFile
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import (
    script_tool_save,
    tool_create,
    tool_delete,
    tool_update,
    tools_import,
)
from tests.web.scripttools.conftest import make_tool

pytestmark = pytest.mark.django_db

FULL = "holds 7 tools, the most one sandbox may hold (JAZZMINE_MAX_TOOLS_PER_SANDBOX=7)"


def source(name: str) -> str:
    return (
        f'def {name}() -> ToolResponse:\n    """Say {name}."""\n'
        "    return ToolResponse(success=True)\n"
    )


def create(sandbox, member, name: str) -> Tool:
    return tool_create(
        sandbox=sandbox, name=name, description=f"Say {name}.", source=source(name),
        author=member, actor=member,
    )  # fmt: skip


@pytest.fixture
def full(ecommerce, member, settings):
    """The demo sandbox (5 tools) with a limit of 7, filled to it."""
    settings.JAZZMINE_MAX_TOOLS_PER_SANDBOX = 7
    create(ecommerce, member, "ping")
    create(ecommerce, member, "pong")
    return ecommerce


def test_each_way_of_making_one_more_tool_is_refused_saying_why(full, member, client) -> None:
    for _ in range(2):  # and tried again
        with pytest.raises(ValidationError, match=FULL.replace("(", r"\(").replace(")", r"\)")):
            create(full, member, "pang")
    # The form, as a person fills it in.
    client.force_login(member)
    data = {"name": "pang", "description": "Say pang.", "kind": "python", "source": source("pang")}
    response = client.post(f"/catalog/sandboxes/{full.pk}/tools/new/", data)
    assert response.status_code == 422
    assert FULL in html.unescape(response.content.decode())
    # A script tool.
    with pytest.raises(ValidationError, match="the most one sandbox may hold"):
        script_tool_save(sandbox=full, tool=make_tool("pang", "print(1)\n"), actor=member)
    # An import: all or nothing, the tool beyond the limit named.
    text = "".join(
        f"@tool(sandbox='ecommerce', description='Say {n}.')\n{source(n)}\n"
        for n in ("pang", "peng")
    )
    upload = SourceFile(name="more.py", size=len(text), data=text.encode())
    with pytest.raises(ImportRefused) as refused:
        tools_import(team=full.team, files=[upload], author=member, actor=member)
    assert FULL in str(refused.value)
    assert Tool.objects.filter(sandbox=full).count() == 7
    assert not Tool.objects.filter(name__in=["pang", "peng"]).exists()


def test_a_tool_deleted_makes_room_and_edits_are_never_refused(full, member, admin) -> None:
    ping = Tool.objects.get(sandbox=full, name="ping")
    assert tool_update(tool=ping, actor=member, description="Say ping, loudly.")
    tool_delete(tool=ping, actor=admin)
    create(full, member, "pang")
    assert Tool.objects.filter(sandbox=full).count() == 7
