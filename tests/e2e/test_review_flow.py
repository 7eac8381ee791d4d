"""Human review in a real Chromium against a real daphne and a real Docker engine."""

from __future__ import annotations

import concurrent.futures

import pytest

from jazzmine.agent_client import AgentClient

from .conftest import agent_token
from .waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

AGENT_BODY = """\
orders = get_orders(status="delivered")
emit_result({"total": sum(o["price"] for o in orders.data["orders"])})
"""

EDITED_BODY = """\
orders = get_orders(status="delivered")
for o in orders.data["orders"]:
    emit_intermediate("order", {"id": o["id"]})
emit_result({"total": sum(o["price"] for o in orders.data["orders"]), "reviewed": True})
"""


@pytest.fixture
def agent(studio_server):
    """Give an agent of its own (not the reviewer) a token on the demo team."""
    with AgentClient(studio_server.url, agent_token(studio_server)) as client:
        yield client


def test_an_agent_submits_a_reviewer_edits_and_approves_and_the_agent_gets_the_result(
    logged_in_page, agent
) -> None:
    page = logged_in_page
    page.goto("/reviews/")
    wait_until(page, "document.body.dataset.queueSocket === 'open'")
    sandbox = agent.sandbox("demo/ecommerce")

    # The agent submits; the queue shows it without a reload.
    submitted = agent.submit(sandbox=sandbox, task="Total of delivered orders", body=AGENT_BODY)
    assert submitted["status"] == "pending"
    page.evaluate("window.__notReloaded = true")
    row = page.locator(f"#submission-{submitted['id']}")
    row.wait_for(timeout=10_000)
    assert page.evaluate("window.__notReloaded") is True
    assert "agent e2e-agent (agent-bot)" in row.inner_text()
    wait_until(page, "document.querySelector('[data-review-badge]').textContent.trim() !== '0'")

    # The agent waits for the result while the reviewer works.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        waiting = pool.submit(agent.wait, submitted["id"], timeout=180)

        row.locator("a").click()
        page.wait_for_url(f"**/reviews/{submitted['id']}/")
        assert "Total of delivered orders" in page.locator("[data-task]").inner_text()
        page.keyboard.press("e")  # the shortcut opens the editor
        editor = page.locator("[data-edit-body]")
        assert editor.evaluate("el => el === document.activeElement")
        # A forbidden edit is marked on its line and cannot be approved...
        editor.fill("secret = open('/etc/passwd')\nemit_result({'s': secret})")
        page.locator("[data-review-editor] .editor-gutter .violation[data-line='1']").wait_for()
        approve = page.locator('form[data-decision="edit"] button[type=submit]')
        assert approve.is_disabled()
        # ...and the fixed edit can.
        editor.fill(EDITED_BODY)
        wait_until(
            page,
            "!document.querySelector('form[data-decision=\"edit\"] button[type=submit]').disabled",
        )
        approve.click()

        # The run streams on the same page.
        page.locator("#decision-panel[data-status=edited_and_approved]").wait_for()
        page.locator("[data-run-timeline] li.intermediate").first.wait_for(timeout=120_000)
        page.locator("[data-run-result]:not([hidden])").wait_for(timeout=120_000)
        assert '"reviewed": true' in page.locator("[data-run-result-body]").inner_text()
        approved = page.locator("[data-approved-sha]").inner_text()

        final = waiting.result(timeout=180)

    assert final["status"] == "edited_and_approved" and final["final"] is True
    assert final["run"]["status"] == "succeeded"
    assert final["run"]["result"] == {"total": 202.25, "reviewed": True}
    assert final["approved_body"] == EDITED_BODY
    assert final["run"]["code_sha256"] == final["approved_sha256"] == approved


def test_a_rejection_reaches_the_agent_as_its_next_previous_error(logged_in_page, agent) -> None:
    page = logged_in_page
    sandbox = agent.sandbox("demo/ecommerce")
    submitted = agent.submit(sandbox=sandbox, task="Count orders", body=AGENT_BODY)
    page.goto(f"/reviews/{submitted['id']}/")
    page.keyboard.press("r")
    feedback = page.locator("[data-feedback]")
    assert feedback.evaluate("el => el === document.activeElement")
    feedback.fill("Count every order, not only delivered ones.")
    page.keyboard.press("Control+Enter")
    page.locator("#decision-panel[data-status=rejected]").wait_for()
    final = agent.wait(submitted["id"], timeout=30)
    assert final["status"] == "rejected"
    assert "Count every order, not only delivered ones." in final["previous_error"]
    generator = agent.generator(sandbox)
    retry = generator.build_prompt(
        "Count orders", sandbox.name, AGENT_BODY, final["previous_error"], attempt=2
    )
    assert "Count every order, not only delivered ones." in retry
