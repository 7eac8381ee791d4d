"""Auto mode's last word is why the LLM failed, not only that no attempt succeeded.

With the LLM failing, Generate said "LLM error: ..." but Auto's summary ("no success in 1
attempt(s)") took its place as the loop ended: the person saw no reason. Checked in
Chromium against the README's local stand-in, made to fail, and then answering again: the
next Auto ends as usual.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from .conftest import FakeLLM, StudioServer, browser_page, login
from .waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.docker]


def queue(llm: FakeLLM, *replies: dict) -> None:
    request = urllib.request.Request(
        f"http://{llm.host}:{llm.port}/_script",
        data=json.dumps({"replies": list(replies)}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    urllib.request.urlopen(request, timeout=5).close()


ENDED = """(() => {
  const said = document.querySelector('#playground-status').textContent;
  const ended = /^(LLM error|no success|succeeded after)/.test(said);
  return ended && !document.querySelector('#auto-button').disabled && said;
})()"""


def auto_ready(page, server: StudioServer, *, attempts: int) -> None:
    """Log in, open the playground and set Auto for a task and a number of attempts."""
    login(page, server)
    page.goto("/playground/")
    page.wait_for_selector("#playground[data-socket=open]")
    page.locator("#task").fill("Count the users")
    page.locator("#max-attempts").fill(str(attempts))


def press_auto(page) -> str:
    page.evaluate("document.querySelector('#playground-status').textContent = ''")
    page.click("#auto-button")
    return wait_until(page, ENDED, timeout=60_000)


def test_auto_ends_saying_why_the_llm_failed(
    browser, studio_server_with_llm: StudioServer, fake_llm: FakeLLM
) -> None:
    with browser_page(browser, studio_server_with_llm) as page:
        auto_ready(page, studio_server_with_llm, attempts=1)
        queue(fake_llm, {"status": 400, "message": "the model is not loaded"})
        said = press_auto(page)
        assert said.startswith("LLM error:") and "answered 400" in said, said
        queue(fake_llm, {"text": "emit_result(1)"})
        said = press_auto(page)  # and once it answers again: the usual summary
        assert said == "succeeded after 1 attempt(s)", said
