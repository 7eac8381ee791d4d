from __future__ import annotations

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from jazzmine_web.catalog.models import Tool, ToolKind
from jazzmine_web.catalog.services import sandbox_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def many_tools(team, ecommerce):
    """500 tools over two sandboxes, written in bulk (the services are tested elsewhere)."""
    other = sandbox_create(team=team, name="warehouse")
    rows = []
    for i in range(495):
        sandbox = other if i % 2 else ecommerce
        tags = ["stock"] if i % 5 == 0 else ["misc"]
        rows.append(
            Tool(
                sandbox=sandbox,
                name=f"tool_{i:03d}",
                description=f"Tool number {i} that counts {'pallets' if i % 7 == 0 else 'boxes'}.",
                source=f"def tool_{i:03d}() -> ToolResponse:\n    return ToolResponse(success=True)\n",
                function_name=f"tool_{i:03d}",
                kind=ToolKind.PYTHON,
                tags=tags,
                tags_index=f",{tags[0]},",
                checksum="0" * 16,
            )
        )
    Tool.objects.bulk_create(rows)
    return other


def test_it_filters_500_tools_by_text_tag_and_sandbox_quickly(client, member, many_tools) -> None:
    client.force_login(member)
    assert Tool.objects.count() == 500
    started = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(
            "/catalog/", {"q": "pallets", "tag": "stock", "sandbox": many_tools.pk}
        )
    elapsed = time.perf_counter() - started
    html = response.content.decode()
    expected = [i for i in range(495) if i % 7 == 0 and i % 5 == 0 and i % 2]
    assert f"{len(expected)} tools match" in html
    assert "tool_035" in html and "tool_070" not in html
    assert len(queries) < 15  # no query per row
    assert elapsed < 1.0


def test_the_first_page_shows_100_of_500_and_says_how_many(client, member, many_tools) -> None:
    client.force_login(member)
    html = client.get("/catalog/").content.decode()
    assert "500 tools" in html
    assert html.count('class="tool-row"') == 100
    assert "page 1 of 5" in html


def test_htmx_gets_only_the_results_partial(client, member, ecommerce) -> None:
    client.force_login(member)
    response = client.get(
        "/catalog/", {"q": "order"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="catalog-results"
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="catalog-results"')
    assert "<html" not in html
    assert "get_orders" in html and "update_order_status" in html and "get_user<" not in html
