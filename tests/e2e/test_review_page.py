"""The review page in Chromium: approval by key takes a confirm step, the tools follow the edit,
the edit's diff is shown once approved, and the Reviews badge is live on every page."""

from __future__ import annotations

import pytest

from jazzmine.agent_client import AgentClient

from .conftest import agent_token
from .waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

# As stored: the agent client strips the newlines around a body.
AGENT_BODY = 'orders = get_orders(status="delivered")\nemit_result(len(orders.data["orders"]))'
# The edit adds a call to a tool that needs review: what the approval covers must follow it.
EDITED_BODY = AGENT_BODY + '\nemit_result(update_order_status("ORD-1001", "shipped").data)'


@pytest.fixture
def agent(studio_server):
    """Give an agent of its own (not the reviewer) a token on the demo team."""
    raw = agent_token(studio_server, token="e2e-page-agent")
    with AgentClient(studio_server.url, raw) as client:
        yield client


def submit(agent, body: str = AGENT_BODY, task: str = "Count delivered orders") -> dict:
    state = agent.submit(sandbox=agent.sandbox("demo/ecommerce"), task=task, body=body)
    assert state["status"] == "pending"
    return state


def form_list(page, name: str) -> list[str]:
    """Return the values the edit form sends as `name` (its list follows the tools panel)."""
    return page.locator(f'#tools-seen input[name="{name}"]').evaluate_all(
        "els => els.map(e => e.value)"
    )


def approvals_posted(page) -> list[str]:
    posted: list[str] = []
    page.on(
        "request",
        lambda r: posted.append(r.url) if r.method == "POST" and "/approve/" in r.url else None,
    )
    return posted


def test_a_single_a_only_asks_and_escape_cancels(logged_in_page, agent) -> None:
    page = logged_in_page
    state = submit(agent)
    page.goto(f"/reviews/{state['id']}/")
    posted = approvals_posted(page)
    step = page.locator('form[data-decision="approve"]')
    assert not step.is_visible()

    page.keyboard.press("a")
    step.wait_for(state="visible")
    confirm = page.locator("[data-approve-confirm]")
    assert confirm.evaluate("el => el === document.activeElement")
    assert "Confirm: approve and run" in confirm.inner_text()
    page.wait_for_timeout(600)
    assert posted == [] and agent.status(state["id"])["status"] == "pending"

    page.keyboard.press("Escape")
    step.wait_for(state="hidden")
    page.wait_for_timeout(300)
    assert posted == [] and agent.status(state["id"])["status"] == "pending"
    assert page.locator("#decision-panel").get_attribute("data-status") == "pending"

    # a, then a again: approved and running.
    page.keyboard.press("a")
    step.wait_for(state="visible")
    page.keyboard.press("a")
    page.locator("#decision-panel[data-status=approved]").wait_for()
    assert len(posted) == 1
    assert agent.status(state["id"])["status"] == "approved"


def test_enter_on_the_confirm_step_approves(logged_in_page, agent) -> None:
    page = logged_in_page
    state = submit(agent)
    page.goto(f"/reviews/{state['id']}/")
    page.keyboard.press("a")
    page.locator("[data-approve-confirm]").wait_for(state="visible")
    page.keyboard.press("Enter")
    page.locator("#decision-panel[data-status=approved]").wait_for()


def test_the_mouse_goes_through_the_same_confirm_step(logged_in_page, agent) -> None:
    page = logged_in_page
    state = submit(agent)
    page.goto(f"/reviews/{state['id']}/")
    posted = approvals_posted(page)
    page.locator("[data-approve-panel] summary").click()
    page.locator("[data-approve-confirm]").wait_for(state="visible")
    assert posted == []
    page.locator("[data-approve-cancel]").click()
    page.locator("[data-approve-confirm]").wait_for(state="hidden")
    assert posted == [] and agent.status(state["id"])["status"] == "pending"


def test_the_tools_follow_the_edit_and_the_diff_stays_after_approval(logged_in_page, agent) -> None:
    page = logged_in_page
    state = submit(agent)
    page.goto(f"/reviews/{state['id']}/")
    panel = page.locator("#tools-panel")
    assert panel.get_attribute("data-reading") == "agent"
    assert panel.locator('[data-tool="update_order_status"]').count() == 0

    page.keyboard.press("e")
    page.locator("[data-edit-body]").fill(EDITED_BODY)
    added = page.locator(
        '#tools-panel[data-reading="edit"] tr[data-tool="update_order_status"][data-added]'
    )
    added.wait_for()
    assert "needs review" in added.inner_text() and "called on line 3" in added.inner_text()
    assert "+emit_result(update_order_status" in page.locator("#edit-changes").inner_text()
    assert "update_order_status" in form_list(page, "tools_seen")
    # The form says which tools its panel showed as needing review: the approval holds for those.
    assert form_list(page, "tools_asked") == ["update_order_status"]

    # Back to the agent's script: the reading follows again.
    page.locator("[data-edit-body]").fill(AGENT_BODY)
    page.locator('#tools-panel[data-reading="agent"]').wait_for()
    assert page.locator('#tools-panel [data-tool="update_order_status"]').count() == 0
    assert form_list(page, "tools_asked") == []

    page.locator("[data-edit-body]").fill(EDITED_BODY)
    added.wait_for()
    wait_until(
        page, "!document.querySelector('form[data-decision=\"edit\"] button[type=submit]').disabled"
    )
    page.locator("[data-edit-approve]").click()
    page.locator("#decision-panel[data-status=edited_and_approved]").wait_for()
    diff = page.locator("[data-edit-diff]")
    assert "+emit_result(update_order_status" in diff.inner_text()
    page.locator(
        '#tools-panel[data-reading="approved-edit"] tr[data-tool="update_order_status"]'
    ).wait_for()

    page.reload()
    assert "+emit_result(update_order_status" in page.locator("[data-edit-diff]").inner_text()
    final = agent.status(state["id"])
    assert final["approved_body"] == EDITED_BODY


def test_approving_before_the_reading_arrives_is_refused_then_shown(logged_in_page, agent) -> None:
    page = logged_in_page
    state = submit(agent)
    page.goto(f"/reviews/{state['id']}/")
    page.keyboard.press("e")
    editor = page.locator("[data-edit-body]")
    editor.fill(EDITED_BODY)
    # Submit in the same tick as the edit: the page still shows the agent's tools.
    page.evaluate("document.querySelector('form[data-decision=\"edit\"]').requestSubmit()")
    error = page.locator("[data-decision-error]")
    error.wait_for()
    assert "update_order_status" in error.inner_text()
    assert agent.status(state["id"])["status"] == "pending"
    page.locator('#tools-panel[data-reading="edit"] tr[data-tool="update_order_status"]').wait_for()
    assert page.locator("[data-edit-body]").input_value() == EDITED_BODY
    page.locator("[data-edit-approve]").click()
    page.locator("#decision-panel[data-status=edited_and_approved]").wait_for()


# Run in the server's database as the demo's admin: get_orders' always-allowed mark set.
ALWAYS_ALLOW_GET_ORDERS = """
from django.contrib.auth import get_user_model
from jazzmine_web.catalog.models import Tool
from jazzmine_web.catalog.services import tool_update
tool = Tool.objects.get(sandbox__team__slug="demo", sandbox__name="ecommerce", name="get_orders")
admin = get_user_model().objects.get(username="demo")
tool_update(tool=tool, actor=admin, always_allow=ALLOWED, note="e2e")
tool.refresh_from_db()
print(tool.is_always_allowed)
"""


def always_allow_get_orders(studio_server, allowed: bool) -> None:
    code = ALWAYS_ALLOW_GET_ORDERS.replace("ALLOWED", repr(allowed))
    shown = studio_server.manage("shell", "-c", code).strip().splitlines()[-1]
    assert shown == str(allowed)


def test_an_edit_is_never_approved_for_a_tool_that_lost_its_mark_after_the_page_showed_it(
    logged_in_page, agent, studio_server
) -> None:
    """The panel showed get_orders as always allowed, so the form asked about nothing; an
    admin then took the mark away. The approval is refused and the panel shows the reading of
    now; approving again approves what it now asks about."""
    page = logged_in_page
    state = submit(agent)
    page.goto(f"/reviews/{state['id']}/")
    page.keyboard.press("e")
    page.locator("[data-edit-body]").fill("# checked by a reviewer\n" + AGENT_BODY)
    page.locator('#tools-panel[data-reading="edit"] tr[data-tool="get_orders"]').wait_for()
    assert "yes" in page.locator('#tools-panel tr[data-tool="get_orders"]').inner_text()
    assert form_list(page, "tools_seen") == ["get_orders"] and form_list(page, "tools_asked") == []
    wait_until(
        page, "!document.querySelector('form[data-decision=\"edit\"] button[type=submit]').disabled"
    )
    always_allow_get_orders(studio_server, False)
    try:
        page.locator("[data-edit-approve]").click()
        error = page.locator("[data-decision-error]")
        error.wait_for()
        assert "get_orders is no longer always allowed" in error.inner_text()
        assert agent.status(state["id"])["status"] == "pending"
        asked = page.locator('#tools-panel[data-reading="edit"] tr[data-tool="get_orders"]')
        asked.wait_for()
        assert "needs review" in asked.inner_text()
        assert form_list(page, "tools_asked") == ["get_orders"]
        page.locator("[data-edit-approve]").click()
        page.locator("#decision-panel[data-status=edited_and_approved]").wait_for()
    finally:
        always_allow_get_orders(studio_server, True)


def test_the_badge_is_live_on_a_page_that_is_not_about_reviews(logged_in_page, agent) -> None:
    page = logged_in_page
    page.goto("/catalog/")
    wait_until(page, "document.body.dataset.badgeSocket === 'open'")
    badge = page.locator(".topbar [data-review-badge]")
    wait_until(
        page, "document.querySelector('.topbar [data-review-badge]').textContent.trim() !== ''"
    )
    before = int(badge.inner_text().strip())
    page.evaluate("window.__notReloaded = true")
    submit(agent, task="A new one while the reviewer reads the catalog")
    wait_until(
        page,
        f"Number(document.querySelector('.topbar [data-review-badge]').textContent) === {before + 1}",
    )
    assert page.evaluate("window.__notReloaded") is True
    assert "empty" not in (badge.get_attribute("class") or "")


def test_text_pushed_far_along_a_line_is_in_sight(logged_in_page, agent) -> None:
    # Spaces pushed a second assignment past the script's box: the reviewer read line 1 as
    # `order = "ORD-1003"`, approved, and ORD-1001 was cancelled. Every line now wraps in its
    # box, the number still on its first row.
    hidden = '; order = "ORD-1001"'
    body = 'order = "ORD-1003"' + " " * 400 + hidden + "\nemit_result(order)"
    state = submit(agent, body=body, task="Cancel the pending order ORD-1003")
    page = logged_in_page
    for width in (1920, 800):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"/reviews/{state['id']}/")
        box = page.locator(".review-script .code-scroll").first
        in_sight = box.evaluate(
            """(box, needle) => {
                const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
                const frame = box.getBoundingClientRect();
                let text = "", nodes = [];
                while (walker.nextNode()) { nodes.push([walker.currentNode, text.length]);
                                            text += walker.currentNode.data; }
                const at = text.indexOf(needle);
                if (at < 0) return "not in the page";
                const [node, start] = nodes.filter(([, s]) => s <= at).pop();
                const range = document.createRange();
                range.setStart(node, at - start);
                range.setEnd(node, Math.min(node.data.length, at - start + 1));
                const r = range.getBoundingClientRect();
                return r.left >= frame.left && r.right <= frame.right ? "in sight"
                    : `at ${Math.round(r.left)}, the box ends at ${Math.round(frame.right)}`;
            }""",
            "ORD-1001",
        )
        assert in_sight == "in sight", (width, in_sight)
        assert box.evaluate("b => b.scrollWidth <= b.clientWidth"), width
