"""The playground's list of attempts ends showing how every run ended, however slow it loads.

The page reads the list again at each step of a loop (generated, run created, run ended,
loop finished). A read asked for while another was on its way waited in htmx's queue, aimed
at the list the first read then replaced: it was dropped, and an attempt whose run had ended
said "Running" until a reload. Checked in Chromium, with the list's answers slowed as a
busy server's are, through Auto's two attempts: the first run fails, the second succeeds.
"""

from __future__ import annotations

import time

import pytest

from .conftest import FakeLLM, StudioServer, browser_page
from .test_auto_says_why_the_llm_failed import auto_ready, press_auto, queue
from .waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

BADGES = """(() => [...document.querySelectorAll('#attempt-list tr[data-attempt]')]
  .map((row) => row.querySelector('.badge').textContent.trim()))()"""


def slowed(route) -> None:
    """Read the list now, and answer late: the next read is asked while this one travels."""
    response = route.fetch()
    time.sleep(0.6)
    route.fulfill(response=response)


def test_every_attempt_says_how_its_run_ended(
    browser, studio_server_with_llm: StudioServer, fake_llm: FakeLLM
) -> None:
    with browser_page(browser, studio_server_with_llm) as page:
        auto_ready(page, studio_server_with_llm, attempts=2)
        errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.route("**/playground/sessions/*/attempts/", slowed)
        queue(fake_llm, {"text": "emit_result(1 / 0)"}, {"text": "emit_result(1)"})
        assert press_auto(page) == "succeeded after 2 attempt(s)"
        badges = wait_until(
            page, f"(() => {{ const b = {BADGES}; return b.length === 2 && b; }})()"
        )
        # The reads still under way come in; then the list must say how each run ended.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and badges != ["Failed", "Succeeded"]:
            time.sleep(0.2)
            badges = page.evaluate(BADGES)
        assert badges == ["Failed", "Succeeded"]
        # Nor did the first run's last words look for the pane regions the second replaced.
        assert errors == []
