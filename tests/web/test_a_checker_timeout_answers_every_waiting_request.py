"""A check that runs out of time in the checker process leaves every other waiting request answered.

The checker process reads one text at a time. One that took longer than
`CHECK_TIMEOUT_SECONDS` had its process killed and its pool shut down, cancelling every text
still waiting in line behind it: `future.result()` raised `CancelledError`, which nothing
caught. From a view's thread asgiref made it the request's own cancellation, and Django sent
no answer at all: an agent that POSTed a 30 KB script while a member's page linted a huge tool
waited until its own timeout, with nothing logged or stored. The texts just behind it (handed
to the process, not yet read) were refused as if the process had died of them.

Those texts did nothing wrong: each is now read on the new process, and refused with a
`CheckerUnavailable` that says why only if that one is stopped under it too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
import time
from typing import Any

import pytest
from channels.db import database_sync_to_async

from jazzmine_web.reviews.models import ReviewPolicy, Submission
from jazzmine_web.studio import checker
from jazzmine_web.studio.checker import PROCESS_THRESHOLD_CHARS, CheckerUnavailable
from jazzmine_web.teams.services import api_token_create
from tests.web.checker import one_line_script, post_json
from tests.web.helpers import allow_tools
from tests.web.reviews.conftest import set_policy

# Far below the default, far above what a waiting text takes once its turn comes.
TIMEOUT = 2.0
# Enough waiting texts to fill the pool's call queue (those are handed to the process before
# their turn: killed, they fail as broken) and have some left in line (those are cancelled).
WAITING = 4
BIG = PROCESS_THRESHOLD_CHARS  # any text this long is read in the checker process


def _late_text() -> tuple[Any, ...]:
    """Return a call that holds the checker process far past `TIMEOUT`, as a huge text does."""
    return (BIG, time.sleep, 60)


def _warm() -> None:
    """Start the checker process under the default timeout: its start is no part of a test."""
    assert checker.checked(BIG, len, "warm") == 4


class _Calls:
    """Calls of `checker.checked` on threads of their own, as views' threads make them."""

    def __init__(self) -> None:
        self.outcomes: dict[str, object] = {}
        self._threads: list[threading.Thread] = []

    def start(self, name: str, *call: Any) -> None:
        thread = threading.Thread(target=self._call, args=(name, call), name=name)
        thread.start()
        self._threads.append(thread)
        time.sleep(0.1)  # each in line behind the one before

    def _call(self, name: str, call: tuple[Any, ...]) -> None:
        try:
            self.outcomes[name] = checker.checked(*call)
        except BaseException as exc:  # whatever escapes is the outcome to look at
            self.outcomes[name] = exc

    def join(self) -> dict[str, object]:
        for thread in self._threads:
            thread.join(timeout=60)
        return self.outcomes


def _is_late(outcome: object) -> bool:
    return isinstance(outcome, CheckerUnavailable) and "took longer than 2 seconds" in outcome.why


def test_the_checks_waiting_behind_one_out_of_time_are_read_on_a_new_process(monkeypatch) -> None:
    _warm()
    monkeypatch.setattr(checker, "CHECK_TIMEOUT_SECONDS", TIMEOUT)
    calls = _Calls()
    calls.start("late", *_late_text())
    for i in range(WAITING):
        calls.start(f"waiting {i}", BIG, len, "x" * i)

    outcomes = calls.join()

    assert _is_late(outcomes.pop("late")), "the text out of time was not refused as late"
    # Not a CancelledError (no answer at all), nor a refusal their own texts did not earn.
    assert outcomes == {f"waiting {i}": i for i in range(WAITING)}


async def test_the_checks_waiting_off_the_event_loop_are_read_on_a_new_process(
    monkeypatch,
) -> None:
    await asyncio.to_thread(_warm)
    monkeypatch.setattr(checker, "CHECK_TIMEOUT_SECONDS", TIMEOUT)
    late = asyncio.create_task(checker.checked_off_loop(*_late_text()))
    await asyncio.sleep(0.3)
    waiting = []
    for i in range(WAITING):
        waiting.append(asyncio.create_task(checker.checked_off_loop(BIG, len, "x" * i)))
        await asyncio.sleep(0.1)

    with pytest.raises(CheckerUnavailable, match="took longer than 2 seconds"):
        await late
    # A CancelledError a waiting call let out would look like its task's own cancellation.
    outcomes = await asyncio.gather(*waiting, return_exceptions=True)

    assert outcomes == list(range(WAITING))


async def test_a_waiting_check_whose_own_task_is_cancelled_is_still_cancelled(
    monkeypatch,
) -> None:
    # A socket that closes cancels its check: that cancellation must go on up as before.
    await asyncio.to_thread(_warm)
    monkeypatch.setattr(checker, "CHECK_TIMEOUT_SECONDS", TIMEOUT)
    late = asyncio.create_task(checker.checked_off_loop(*_late_text()))
    await asyncio.sleep(0.3)
    waiting = asyncio.create_task(checker.checked_off_loop(BIG, len, "x"))
    await asyncio.sleep(0.3)

    waiting.cancel()

    with pytest.raises(asyncio.CancelledError):
        await waiting
    with pytest.raises(CheckerUnavailable, match="took longer than 2 seconds"):
        await late


class _AlwaysDisplaced(checker._CheckerProcess):
    """A checker whose every call is cancelled in line, as behind a text out of time each time."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def submit(
        self, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[concurrent.futures.ProcessPoolExecutor, concurrent.futures.Future[Any]]:
        self.calls += 1
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        future.cancel()
        return concurrent.futures.ProcessPoolExecutor(1), future  # never started


def test_a_check_displaced_twice_is_refused_saying_why(monkeypatch) -> None:
    displaced = _AlwaysDisplaced()
    monkeypatch.setattr(checker, "_checker", displaced)

    with pytest.raises(CheckerUnavailable) as refused:
        checker.checked(BIG, len, "x")

    assert "a text ahead of it took longer than 30 seconds" in str(refused.value)
    assert displaced.calls == 2  # tried again once, on a new process: no more


async def test_a_check_off_the_event_loop_displaced_twice_is_refused_saying_why(
    monkeypatch,
) -> None:
    displaced = _AlwaysDisplaced()
    monkeypatch.setattr(checker, "_checker", displaced)

    with pytest.raises(CheckerUnavailable) as refused:
        await checker.checked_off_loop(BIG, len, "x")

    assert "a text ahead of it took longer than 30 seconds" in str(refused.value)
    assert displaced.calls == 2


# The tester's case, through the agents' API: a 30 KB script behind a member's huge lint.
SCRIPT = one_line_script(30_000)


@database_sync_to_async
def _agent(sandbox, member) -> str:
    set_policy(sandbox, ReviewPolicy.ALWAYS)  # held for review: read, stored, not run
    allow_tools(sandbox, "get_orders")
    return api_token_create(user=member, name="ci-bot").raw


async def _submit(token: str, sandbox) -> tuple[int, dict]:
    payload = {"sandbox": sandbox.pk, "task": "Total of delivered orders", "body": SCRIPT}
    # Bounded: the old code sent no answer at all, and the request waited for ever.
    async with asyncio.timeout(60):
        status, answer = await post_json("/api/v1/submissions/", payload, token)
    return status, json.loads(answer)


@pytest.mark.django_db(transaction=True)
async def test_an_agents_script_behind_a_lint_out_of_time_is_answered(
    ecommerce, member, monkeypatch
) -> None:
    assert len(SCRIPT) >= PROCESS_THRESHOLD_CHARS  # read in the checker process
    token = await _agent(ecommerce, member)
    await asyncio.to_thread(_warm)
    monkeypatch.setattr(checker, "CHECK_TIMEOUT_SECONDS", TIMEOUT)
    # The member's page: a lint that holds the process, and the page's other reads behind it.
    page = _Calls()
    await asyncio.to_thread(page.start, "lint", *_late_text())
    for i in range(WAITING - 1):
        await asyncio.to_thread(page.start, f"read {i}", BIG, len, "x" * i)

    status, answer = await _submit(token, ecommerce)

    assert status == 201, answer
    assert answer["status"] == "pending" and answer["violations"] == [], answer
    assert await database_sync_to_async(Submission.objects.filter(pk=answer["id"]).exists)()
    outcomes = await asyncio.to_thread(page.join)
    assert _is_late(outcomes.pop("lint"))
    assert outcomes == {f"read {i}": i for i in range(WAITING - 1)}
