"""The one polling loop of the tests: it returns what held, or fails saying what never did."""

from __future__ import annotations

import itertools
import time

import pytest

from tests.waiting import wait_until, wait_until_async


def test_it_returns_the_first_true_answer_without_waiting_longer() -> None:
    answers = iter([None, 0, "", "there"])
    started = time.monotonic()
    assert wait_until(lambda: next(answers), timeout=5, interval=0.01) == "there"
    assert time.monotonic() - started < 1


def test_it_fails_with_the_message_once_the_time_is_up() -> None:
    calls = itertools.count(1)
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"^never ready \(waited 0.2 s\)$"):
        wait_until(lambda: next(calls) and False, timeout=0.2, interval=0.05, message="never ready")
    assert time.monotonic() - started >= 0.2
    assert next(calls) > 2  # it kept looking until the deadline


def test_a_message_to_call_tells_the_state_at_the_end() -> None:
    seen: list[int] = []
    with pytest.raises(AssertionError) as failed:
        wait_until(
            lambda: seen.append(len(seen) + 1),
            timeout=0.1,
            interval=0.04,
            message=lambda: f"still nothing after {seen[-1]} looks",
        )
    assert len(seen) >= 2
    assert str(failed.value).startswith(f"still nothing after {len(seen)} looks")


async def test_the_async_form_awaits_the_predicate() -> None:
    answers = iter([False, False, 7])

    async def ready() -> int | bool:
        return next(answers)

    assert await wait_until_async(ready, timeout=5, interval=0.01) == 7
    with pytest.raises(AssertionError, match="nothing came"):
        await wait_until_async(ready_never, timeout=0.05, interval=0.01, message="nothing came")


async def ready_never() -> bool:
    return False
