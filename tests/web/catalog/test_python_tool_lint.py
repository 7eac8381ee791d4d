"""The tool page flags a Python tool whose own defaults differ from its documented ones."""

from __future__ import annotations

import json
import re

import pytest

from jazzmine_web.catalog.selectors import python_tool_lint
from jazzmine_web.catalog.services import tool_create, tool_update

pytestmark = pytest.mark.django_db

SOURCE = (
    "def find_orders(limit: int = 10) -> ToolResponse:\n"
    "    return ToolResponse(success=True, data=limit)\n"
)
DOCUMENTED_20 = [{"name": "limit", "type": "int", "description": "Most orders.", "default": 20}]


@pytest.fixture
def orders(empty_sandbox):
    return tool_create(
        sandbox=empty_sandbox,
        name="find_orders",
        description="List orders.",
        source=SOURCE,
        parameters=DOCUMENTED_20,
    )


def _lint_item(html: str, key: str) -> str:
    match = re.search(
        rf'<li class="lint-item [^"]*" data-lint="{key}" data-passed="(yes|no)"', html
    )
    assert match, f"no lint item {key} on the page"
    return match.group(1)


def test_the_tool_page_flags_a_default_mismatch(client, member, orders) -> None:
    client.force_login(member)
    html = client.get(f"/catalog/tools/{orders.pk}/").content.decode()
    assert 'id="python-lint-panel"' in html and "1 of 4 failed" in html
    assert _lint_item(html, "defaults_match_signature") == "no"
    assert "limit: documented default 20 but the function&#x27;s default is 10" in html


def test_the_tool_page_passes_matching_defaults(client, member, orders) -> None:
    tool_update(tool=orders, source=SOURCE.replace("= 10", "= 20"))
    client.force_login(member)
    html = client.get(f"/catalog/tools/{orders.pk}/").content.decode()
    assert _lint_item(html, "defaults_match_signature") == "yes"
    assert "all 4 passed" in html


def test_a_docstring_default_is_checked_too(orders) -> None:
    documented = SOURCE.replace(
        "-> ToolResponse:\n",
        '-> ToolResponse:\n    """List orders.\n\n    Args:\n        limit: Most orders. '
        'Defaults to 20.\n    """\n',
    )
    tool_update(tool=orders, source=documented, parameters=[{**DOCUMENTED_20[0], "default": 10}])
    (item, *_) = python_tool_lint(orders)
    assert not item.passed
    assert item.message == "limit: the docstring says default 20 but the function's default is 10"


def test_the_tool_page_flags_a_parameter_no_script_may_pass(client, member, orders) -> None:
    tool_update(tool=orders, source=SOURCE.replace("limit: int = 10", "limit: int = 20, cache={}"))
    client.force_login(member)
    html = client.get(f"/catalog/tools/{orders.pk}/").content.decode()
    assert _lint_item(html, "parameters_documented") == "no"
    assert "no script may pass cache (not documented)" in html


def test_the_tool_page_flags_a_misspelt_parameter_type(client, member, orders) -> None:
    tool_update(tool=orders, parameters=[{**DOCUMENTED_20[0], "type": "itn"}])
    client.force_login(member)
    html = client.get(f"/catalog/tools/{orders.pk}/").content.decode()
    assert _lint_item(html, "parameter_types_known") == "no"
    assert "not a Python or JSON Schema type: limit (&#x27;itn&#x27;)" in html


def test_saving_a_mismatch_through_the_form_warns_at_once(client, member, orders) -> None:
    client.force_login(member)
    data = {
        "name": "find_orders",
        "description": "List orders, newest first.",
        "parameters": json.dumps(DOCUMENTED_20),
        "source": SOURCE,
        "kind": "python",
        "note": "wording",
    }
    page = client.post(f"/catalog/tools/{orders.pk}/edit/", data, follow=True)
    shown = [str(m) for m in page.context["messages"]]
    assert any(m.startswith("Lint: documented defaults equal") and "limit" in m for m in shown)
    data["source"] = SOURCE.replace("= 10", "= 20")
    page = client.post(f"/catalog/tools/{orders.pk}/edit/", data, follow=True)
    shown = [str(m) for m in page.context["messages"]]
    assert any(m.startswith("Saved find_orders as v3") for m in shown)
    assert not any(m.startswith("Lint:") for m in shown)


def test_script_tools_keep_their_own_lint(client, member, orders) -> None:
    orders.kind = "script"
    assert python_tool_lint(orders) == []
