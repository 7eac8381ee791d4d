"""A script tool's parameters keep the order of its tool.json, read back from any database.

On PostgreSQL a tool's JSON Schema came back from its jsonb column with its properties in
jsonb's order (shortest name first), not the tool.json's. That order is the order of the
tool's positional arguments and part of the code an admin accepts: a tool an admin had just
saved read as changed since he accepted it (its secrets withheld from every run), a call
`rsi("AAPL", 30)` set another parameter than on SQLite, and saving the tool's page
unchanged made new code (taken from the LLMs until a trial passed again). Run on SQLite
and on PostgreSQL alike (the suite runs on both).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from django.test import Client

from jazzmine.scripttools import load_tool_dir
from jazzmine.scripttools.adapter import runner_fields
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.script_rows import script_tool_from_row
from jazzmine_web.catalog.services import script_tool_save, tool_publish
from tests.scripttools.samples import RSI
from tests.web.helpers import migrate, tool_form_post

pytestmark = pytest.mark.django_db


# Not in jsonb's order ("days" is shortest): what a person writes, most important first.
ORDER = ["symbol", "window", "days"]
PARAMETERS = {
    "type": "object",
    "properties": {
        "symbol": {"type": "string", "description": "Ticker symbol."},
        "window": {"type": "integer", "description": "Lookback window.", "default": 14},
        "days": {"type": "integer", "description": "Days of history.", "default": 90},
    },
    "required": ["symbol"],
}


@pytest.fixture
def rsi(ecommerce, team_admin) -> Tool:
    """calculate_rsi with parameters symbol, window, days, saved by an admin and published."""
    tool = replace(load_tool_dir(RSI), parameters=PARAMETERS)
    row, _ = script_tool_save(sandbox=ecommerce, tool=tool, author=team_admin, actor=team_admin)
    return tool_publish(tool=row)


def test_read_back_it_is_the_code_the_admin_accepted(rsi) -> None:
    row = Tool.objects.get(pk=rsi.pk)
    assert list(row.schema["properties"]) == ORDER
    assert row.code_digest == row.accepted_code_digest == rsi.code_digest
    # Positional arguments in the tool.json's order, the required one first.
    tool = script_tool_from_row(row)
    assert tool is not None
    assert runner_fields(tool)["names"] == ORDER
    version = row.versions.get()
    assert list(version.tool_json["tool.json"]["parameters"]["properties"]) == ORDER


def code_of(tool: Tool) -> dict[str, Any]:
    tool.refresh_from_db()
    return {
        "checksum": tool.checksum,
        "digest": tool.code_digest,
        "accepted": tool.accepted_code_digest,
        "published": tool.published,
    }


def test_a_save_without_a_change_writes_nothing(rsi, team_admin) -> None:
    client = Client()
    client.force_login(team_admin)
    before, versions = code_of(rsi), rsi.versions.count()
    for _ in range(2):
        tool_form_post(client, rsi)
        assert code_of(rsi) == before
        assert rsi.versions.count() == versions


def test_a_tags_edit_by_a_member_keeps_the_code_accepted(rsi, member) -> None:
    before = code_of(rsi)
    client = Client()
    client.force_login(member)
    tool_form_post(client, rsi, tags="finance, momentum")
    assert code_of(rsi) == before  # still published, still accepted
    rsi.refresh_from_db()
    assert rsi.tags == ["finance", "momentum"]


@pytest.mark.django_db(transaction=True)
def test_the_columns_go_back_and_forth_with_what_they_hold(rsi) -> None:
    row = Tool.objects.get(pk=rsi.pk)
    held = (row.schema, row.parameters, row.extra, row.versions.get().tool_json)
    try:
        migrate(("catalog", "0013_code_digest_binds_documented_parameters"))
    finally:
        migrate()
    row = Tool.objects.get(pk=rsi.pk)
    # Equal as JSON (on PostgreSQL the way back through jsonb sorted the keys, as before).
    assert (row.schema, row.parameters, row.extra, row.versions.get().tool_json) == held
    assert script_tool_from_row(row) is not None


def test_a_description_edit_is_a_version_of_the_same_code(rsi, team_admin, member) -> None:
    # The prompt is what a team debugs: a better description must not take the tool from
    # the LLMs (a new trial) nor its secrets (an admin's acceptance), as it does not for a
    # Python tool. It is a version of the prompt, on the same code.
    before, versions = code_of(rsi), rsi.versions.count()
    texts = ('Compute the "RSI"', "RSI of a ticker.\nSecond line.", 'Ends in \\ and """')
    for who, text in zip((member, team_admin, member), texts, strict=True):
        client = Client()
        client.force_login(who)
        tool_form_post(client, rsi, description=text)
        assert code_of(rsi) == before  # still published, still accepted
        rsi.refresh_from_db()
        assert rsi.description == text
    assert rsi.versions.count() == versions + 3
