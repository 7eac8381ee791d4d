"""Waiting for a page to reach a state, under the pages' Content-Security-Policy.

The pages allow no eval (jazzmine_web/settings.py), and the browser tests keep that policy on so
that they see any page that needs it. Playwright's `wait_for_function(string)` compiles its
predicate with `new Function` inside the page, which the policy refuses; `wait_until` polls
the same expression through `evaluate` (the DevTools protocol, which CSP does not govern), with
the suite's one polling loop (`tests.waiting`).
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Error, Page

from tests import waiting


def wait_until(page: Page, expression: str, *, timeout: float = 15_000) -> Any:
    """Poll a JavaScript expression until it is truthy; return its value (timeout in ms)."""

    def value() -> Any:
        try:
            return page.evaluate(expression)
        except Error as error:  # a navigation between two polls
            if "context was destroyed" not in str(error):
                raise
            return None

    return waiting.wait_until(
        value, timeout=timeout / 1000, interval=0.05, message=f"in vain for: {expression}"
    )
