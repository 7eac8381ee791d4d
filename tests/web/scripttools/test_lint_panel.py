"""The tool page of a script tool shows the spec's checklist, item by item."""

from __future__ import annotations

import re

from django.urls import reverse

from jazzmine_web.catalog.services import script_tool_save

from .conftest import rsi_tool


def _items(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-lint="(\w+)" data-passed="(yes|no)"', html))


def test_a_good_tool_passes_every_item(client, member, rsi_row) -> None:
    client.force_login(member)
    html = client.get(reverse("catalog:tool", args=[rsi_row.pk])).content.decode()
    items = _items(html)
    assert len(items) == 18
    assert set(items.values()) == {"yes"}
    assert "all 18 passed" in html


def test_a_broken_tool_fails_the_items_it_breaks_with_their_messages(
    client, member, sandbox
) -> None:
    schema = rsi_tool().parameters
    schema["properties"]["period"]["default"] = 20  # the script says 14
    source = rsi_tool().source.replace("print(json.dumps(result))", 'print("rsi", result)')
    row, _ = script_tool_save(
        sandbox=sandbox, tool=rsi_tool(parameters=schema, source=source), author=member
    )
    client.force_login(member)
    html = client.get(reverse("catalog:tool", args=[row.pk])).content.decode()
    items = _items(html)
    assert items["defaults_match_script"] == "no"
    assert items["stdout_contract"] == "no"
    assert items["valid_json"] == "yes"
    assert "2 of 18 failed" in html
    assert "period" in html and "14" in html


def test_a_python_tool_page_has_no_lint_panel(client, member, sandbox) -> None:
    from jazzmine_web.catalog.services import tool_create

    row = tool_create(
        sandbox=sandbox,
        name="ping",
        description="Answer pong",
        source='def ping() -> ToolResponse:\n    return ToolResponse(success=True, data="pong")\n',
    )
    client.force_login(member)
    html = client.get(reverse("catalog:tool", args=[row.pk])).content.decode()
    assert 'id="lint-panel"' not in html
