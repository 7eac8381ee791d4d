"""Waiting for a page to reach a state, under the pages' Content-Security-Policy.

The pages allow no eval (jazzmine_web/settings.py), and the browser tests keep that policy on so
that they see any page that needs it. Playwright's `wait_for_function(string)` compiles its
predicate with `new Function` inside the page, which the policy refuses; `wait_until` polls
the same expression through `evaluate` (the DevTools protocol, which CSP does not govern).
"""

from __future__ import annotations

import time
from typing import Any

from playwright.sync_api import Error, Page


def wait_until(page: Page, expression: str, *, timeout: float = 15_000) -> Any:
    """Poll a JavaScript expression until it is truthy; return its value (timeout in ms)."""
    deadline = time.monotonic() + timeout / 1000
    while True:
        try:
            value = page.evaluate(expression)
        except Error as error:  # a navigation between two polls
            if "context was destroyed" not in str(error):
                raise
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout / 1000:g} s in vain for: {expression}")
        page.wait_for_timeout(50)
