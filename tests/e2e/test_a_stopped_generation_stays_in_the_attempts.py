"""A generation stopped before the LLM finished stays in the attempts list, after a reload too.

Cancel (or a reload) during a generation lost it: its prompt, and the tokens already shown,
were gone, and the list said nothing. Checked in Chromium against the README's local LLM
stand-in answering slowly: Cancel, then a reload mid-answer, then a generation that ends.
"""

from __future__ import annotations

import time

import pytest

from .conftest import FakeLLM, StudioServer, browser_page, login
from .test_auto_says_why_the_llm_failed import queue
from .waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

ANSWER = "```python\nnames = ['ada', 'grace']\nemit_result(len(names))\n```"
SLOW = {"text": ANSWER, "token_delay": 0.4}

ROWS = """(() => [...document.querySelectorAll('#attempt-list tr[data-attempt]')].map((row) => {
  const badge = row.querySelector('.badge');
  return [badge.textContent.trim(), badge.getAttribute('title') || ''];
}))()"""


def generating(page) -> None:
    """Press Generate and wait until the editor shows the first of the answer's tokens."""
    page.click("#generate-button")
    wait_until(page, "document.querySelector('#script-body').value.includes('python')")


def rows_become(page, expected: list[list[str]]) -> list[list[str]]:
    """Wait for the attempts list to read `expected`; return what it reads."""
    deadline = time.monotonic() + 10
    rows = page.evaluate(ROWS)
    while rows != expected and time.monotonic() < deadline:
        time.sleep(0.2)
        rows = page.evaluate(ROWS)
    return rows


def test_cancel_and_reload_keep_the_attempt_and_say_why(
    browser, studio_server_with_llm: StudioServer, fake_llm: FakeLLM
) -> None:
    with browser_page(browser, studio_server_with_llm) as page:
        login(page, studio_server_with_llm)
        page.goto("/playground/")
        page.wait_for_selector("#playground[data-socket=open]")
        page.locator("#task").fill("Count the users")

        queue(fake_llm, SLOW)
        generating(page)
        page.click("#cancel-button")
        said = "cancelled: the editor holds the LLM's unfinished answer"
        wait_until(page, f"document.querySelector('#playground-status').textContent === {said!r}")
        assert rows_become(page, [["Stopped", "stopped with Cancel"]]) == [
            ["Stopped", "stopped with Cancel"]
        ]

        page.reload()
        page.wait_for_selector("#playground[data-socket=open]")
        assert page.evaluate(ROWS) == [["Stopped", "stopped with Cancel"]]

        queue(fake_llm, SLOW)
        generating(page)
        # Mid-answer: the new page is rendered before the old one's socket closes and stores
        # the generation; it shows it without another reload.
        page.reload()
        page.wait_for_selector("#playground[data-socket=open]")
        reloaded = [
            ["Stopped", "stopped with Cancel"],
            ["Stopped", "the page was closed or reloaded"],
        ]
        assert rows_become(page, reloaded) == reloaded

        queue(fake_llm, {"text": ANSWER})
        page.click("#generate-button")
        wait_until(
            page,
            "document.querySelector('#playground-status').textContent.includes('generated in')",
        )
        # Numbered as the list numbers it (the loop's own count starts at 1 each time).
        assert page.evaluate("document.querySelector('#playground-status').textContent").startswith(
            "attempt 3 generated in"
        )
        ended = [*reloaded, ["Drafted", ""]]
        assert rows_become(page, ended) == ended
