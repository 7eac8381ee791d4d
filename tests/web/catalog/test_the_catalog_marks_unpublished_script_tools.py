"""The catalog marks a script tool no LLM is offered, as the sandbox page does.

The home page hid unpublished script tools and the sandbox page marked them "not published";
the catalog listed them like any other, as though LLMs were offered them.
"""

from __future__ import annotations

import re

import pytest

from jazzmine_web.catalog.services import script_tool_save
from jazzmine_web.scripttools.services import script_tool_publish
from tests.web.scripttools.conftest import rsi_tool, trial_recorded

pytestmark = pytest.mark.django_db


def catalog_rows(client, sandbox) -> dict[str, str]:
    html = client.get(f"/catalog/?sandbox={sandbox.pk}").content.decode()
    rows = re.findall(r'<tr class="tool-row">(.*?)</tr>', html, re.S)
    return {re.search(r"<code>(\w+)</code>", row)[1]: row for row in rows}


def test_an_unpublished_script_tool_is_marked_until_it_is_published(
    client, member, ecommerce
) -> None:
    row, _ = script_tool_save(sandbox=ecommerce, tool=rsi_tool(), author=member)
    client.force_login(member)

    rows = catalog_rows(client, ecommerce)
    assert ">not published</span>" in rows["calculate_rsi"]
    assert ">not published</span>" not in rows["get_orders"]  # a Python tool, offered

    trial_recorded(row)
    script_tool_publish(tool=row, actor=member)
    assert ">not published</span>" not in catalog_rows(client, ecommerce)["calculate_rsi"]
