"""At 800 px wide the navigation takes at most two lines, and the review queue and the review
page fit the window: nothing runs off to the right, and a long script line scrolls in its box."""

from __future__ import annotations

import pytest

from jazzmine.agent_client import AgentClient

from .conftest import agent_token, sized_page

pytestmark = [pytest.mark.e2e]

LONG_LINE = "note = " + repr("a long line an agent wrote without a break " * 8)
BODY = f'{LONG_LINE}\norders = get_orders(status="delivered")\nemit_result({{"n": len(orders.data["orders"]), "note": note}})'
TASK = "Count the delivered orders and explain the count in a long note " * 2


# Rows of boxes: boxes whose vertical centres are within a few pixels share a line.
LINES_OF = """(selector) => {
  const centres = [...document.querySelectorAll(selector)]
    .map((el) => el.getBoundingClientRect())
    .filter((r) => r.width > 0 && r.height > 0)
    .map((r) => r.top + r.height / 2)
    .sort((a, b) => a - b);
  const lines = [];
  for (const c of centres) if (!lines.length || c - lines[lines.length - 1] > 6) lines.push(c);
  return lines.length;
}"""

OVERFLOW = """(selector) => {
  const doc = document.documentElement;
  const el = selector ? document.querySelector(selector) : null;
  const box = el ? el.getBoundingClientRect() : null;
  return {
    viewport: window.innerWidth,
    page: doc.scrollWidth,
    right: box ? box.right : 0,
    left: box ? box.left : 0,
    scrollWidth: el ? el.scrollWidth : 0,
    clientWidth: el ? el.clientWidth : 0,
  };
}"""


@pytest.fixture
def submission(studio_server) -> dict:
    raw = agent_token(
        studio_server,
        username="agent-with-a-rather-long-name",
        token="layout-agent-with-a-long-token-name",
    )
    with AgentClient(studio_server.url, raw) as agent:
        state = agent.submit(sandbox=agent.sandbox("demo/ecommerce"), task=TASK, body=BODY)
    assert state["status"] == "pending"
    return state


@pytest.fixture
def narrow(browser, studio_server):
    with sized_page(browser, studio_server, 800, 900) as page:
        yield page


def assert_no_page_overflow(page) -> None:
    sizes = page.evaluate(OVERFLOW, None)
    assert sizes["page"] <= sizes["viewport"], sizes


def test_the_navigation_takes_at_most_two_lines(narrow, submission) -> None:
    for path in ("/", "/catalog/", "/reviews/", "/reviews/audit/", f"/reviews/{submission['id']}/"):
        narrow.goto(path)
        lines = narrow.evaluate(LINES_OF, ".topbar .brand, .topbar nav a, .topbar .user > *")
        assert lines <= 2, (path, lines)
        # Every link is on screen, not pushed off the right edge.
        rights = narrow.eval_on_selector_all(
            ".topbar nav a", "els => els.map(e => e.getBoundingClientRect().right)"
        )
        assert max(rights) <= 800, (path, rights)
        assert_no_page_overflow(narrow)


def test_the_review_queue_fits(narrow, submission) -> None:
    narrow.goto("/reviews/")
    narrow.locator(f"#submission-{submission['id']}").wait_for()
    assert_no_page_overflow(narrow)
    table = narrow.evaluate(OVERFLOW, "#queue-table")
    # The table itself fits its column: nothing hides in a scrolled-away part.
    assert table["right"] <= table["viewport"], table
    wrapper = narrow.evaluate(OVERFLOW, ".table-scroll")
    assert wrapper["scrollWidth"] <= wrapper["clientWidth"], wrapper
    # Measured in one go: the live queue may swap the row in anew between two separate reads.
    rights = narrow.eval_on_selector_all(
        f"#submission-{submission['id']} td", "els => els.map(e => e.getBoundingClientRect().right)"
    )
    assert rights and max(rights) <= 800, rights


def test_the_review_page_gives_the_script_the_width_and_cuts_nothing(narrow, submission) -> None:
    narrow.goto(f"/reviews/{submission['id']}/")
    assert_no_page_overflow(narrow)
    main = narrow.evaluate(OVERFLOW, "main")
    script = narrow.evaluate(OVERFLOW, "#review-script")
    assert script["right"] <= 800 and script["left"] >= 0
    # The script's card spans the content width, not half of it.
    assert script["right"] - script["left"] >= 0.9 * (main["clientWidth"] - 2 * 12), script
    # The long line wraps inside its box (not cut, not pushing the page, nothing out of sight).
    box = narrow.evaluate(OVERFLOW, "#review-script .code-scroll")
    assert box["scrollWidth"] <= box["clientWidth"], box
    # The long line's last character is inside the box, with no scrolling.
    reach = narrow.eval_on_selector(
        "#review-script .code-scroll",
        """el => {
          const token = [...el.querySelectorAll("code span")].find(
            (s) => s.textContent.includes("without a break"));
          return {end: token.getBoundingClientRect().right, box: el.getBoundingClientRect().right};
        }""",
    )
    assert reach["end"] <= reach["box"] + 1, reach
    for selector in ("#tools-panel", "#decision-panel", ".review-identity"):
        sizes = narrow.evaluate(OVERFLOW, selector)
        assert sizes["right"] <= 800, (selector, sizes)
    # The editor fits too once opened.
    narrow.keyboard.press("e")
    editor = narrow.evaluate(OVERFLOW, "[data-review-editor]")
    assert editor["right"] <= 800, editor
    assert_no_page_overflow(narrow)


def test_at_1400_px_the_script_is_full_width(browser, studio_server, submission) -> None:
    with sized_page(browser, studio_server, 1400, 900) as page:
        page.goto(f"/reviews/{submission['id']}/")
        lines = page.evaluate(LINES_OF, ".topbar .brand, .topbar nav a, .topbar .user > *")
        assert lines == 1
        main = page.evaluate(OVERFLOW, "main")
        script = page.evaluate(OVERFLOW, "#review-script")
        assert script["right"] - script["left"] >= 0.9 * (main["clientWidth"] - 2 * 19)
        tools = page.evaluate(OVERFLOW, "#tools-panel")
        assert tools["left"] >= script["left"] and tools["right"] <= script["right"] + 1
