"""On a phone (390 px wide) no page runs off to the right, and the playground can be used.

The playground kept its two columns side by side, the editor some 60 px wide with Generate
cut off; the home and catalog tables, the runs list, a tool's parameters, the secrets, the
token form and the review queue pushed the whole page sideways; the navigation hid half its
links in a strip that scrolled with no sign of it. A table wider than the screen scrolls in
its own box now, the playground's columns stack, and the navigation wraps.
"""

from __future__ import annotations

import pytest

from jazzmine.agent_client import AgentClient

from .conftest import agent_token, sized_page
from .test_layout_at_800px import OVERFLOW

pytestmark = [pytest.mark.e2e]

# A phone's width. Measured in a desktop window of that width: a mobile browser zooms out to
# fit a wider page, which hides the overflow from the measure rather than from the person.
WIDTH = 390
PAGES = (
    "/",
    "/catalog/",
    "/playground/",
    "/runs/",
    "/account/tokens/",
    "/reviews/webhooks/",
    "/reviews/",
    "/reviews/audit/",
)


@pytest.fixture
def phone(browser, studio_server):
    with sized_page(browser, studio_server, WIDTH, 844) as page:
        yield page


@pytest.fixture
def pending(studio_server) -> None:
    raw = agent_token(studio_server, username="phone-agent", token="phone-agent-token")
    with AgentClient(studio_server.url, raw) as agent:
        body = 'orders = get_orders(status="delivered")\nemit_result(len(orders.data["orders"]))'
        agent.submit(sandbox=agent.sandbox("demo/ecommerce"), task="Count orders", body=body)


def test_no_page_runs_off_to_the_right(phone, pending) -> None:
    phone.goto("/catalog/")
    tool = phone.locator("a[href^='/catalog/tools/']").first.get_attribute("href")
    sandbox = phone.locator("a[href^='/catalog/sandboxes/']").first.get_attribute("href")
    wide = {}
    for path in (*PAGES, tool, sandbox):
        phone.goto(path)
        sizes = phone.evaluate(OVERFLOW, None)
        if sizes["page"] > WIDTH:
            wide[path] = sizes["page"]
    assert not wide, wide


def test_the_playground_stacks_its_columns(phone) -> None:
    phone.goto("/playground/")
    phone.wait_for_selector("#playground[data-socket=open]")
    editor = phone.locator("#script-body").bounding_box()
    assert editor["width"] >= 250, editor  # some 60 px before
    for button in ("#run-button", "#generate-button"):
        box = phone.locator(button).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, (button, box)


def test_every_link_of_the_navigation_is_in_sight(phone) -> None:
    phone.goto("/")
    links = phone.locator(".topbar nav a")
    for n in range(links.count()):
        box = links.nth(n).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, (links.nth(n).inner_text(), box)
