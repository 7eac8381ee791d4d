"""Waiting in tests: poll a condition until it holds, or fail saying what never happened.

Workers, sandboxes and servers are other processes: a test can only look again until what it
expects is there. One loop here, so that every wait has a deadline and a message.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

Message = str | Callable[[], str]


def _said(message: Message, timeout: float) -> str:
    # A callable message is read only on failure, so it can show the state as it was then.
    text = message() if callable(message) else message
    return f"{text} (waited {timeout:g} s)"


def wait_until(
    predicate: Callable[[], T],
    *,
    timeout: float,
    interval: float = 0.1,
    message: Message = "the condition never held",
) -> T:
    """Call `predicate` until it returns something true and return that; fail after `timeout`.

    It is always called at least once, and once more at the deadline, so a slow machine that
    gets there just in time still passes. What it raises is not caught: a predicate may
    assert that what it waits for can still happen.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(_said(message, timeout))
        time.sleep(interval)


async def wait_until_async(
    predicate: Callable[[], Awaitable[T]],
    *,
    timeout: float,
    interval: float = 0.1,
    message: Message = "the condition never held",
) -> T:
    """Await `predicate` until it returns something true, as `wait_until` does, without blocking."""
    deadline = time.monotonic() + timeout
    while True:
        value = await predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(_said(message, timeout))
        await asyncio.sleep(interval)
