"""The stop switch of one piece of work, fired from another thread: a run, a trial, a build."""

from __future__ import annotations

import asyncio
import threading
import time
import warnings

import pytest

from jazzmine.interrupts import Interrupt, WorkInterrupted


def test_an_interrupt_never_fired_lets_the_work_end_as_it_would():
    interrupt = Interrupt()

    async def work() -> int:
        await asyncio.sleep(0.01)
        return 7

    assert interrupt.run(work()) == 7
    interrupt.check()  # nothing raised
    assert interrupt.reason is None


def test_firing_from_another_thread_cancels_the_coroutine_after_its_clean_up():
    interrupt = Interrupt()
    cleaned = []

    async def work() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            await asyncio.sleep(0.01)  # e.g. removing its container
            cleaned.append(True)

    threading.Timer(0.2, interrupt.fire, args=("the worker stopped",)).start()
    started = time.monotonic()
    with pytest.raises(WorkInterrupted, match="the worker stopped"):
        interrupt.run(work())
    assert time.monotonic() - started < 5
    assert cleaned == [True]


def test_work_started_after_the_fire_never_runs():
    interrupt = Interrupt()
    interrupt.fire("too late")
    ran = []

    async def work() -> None:
        ran.append(True)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "coroutine was never awaited"
        with pytest.raises(WorkInterrupted, match="too late"):
            interrupt.run(work())
    assert ran == []
    with pytest.raises(WorkInterrupted):
        interrupt.check()


def test_the_first_reason_stays_and_a_fire_after_the_end_changes_nothing():
    interrupt = Interrupt()

    async def work() -> str:
        return "done"

    assert interrupt.run(work()) == "done"
    interrupt.fire("first")
    interrupt.fire("second")
    assert interrupt.reason == "first"


def test_a_cancel_that_is_not_the_interrupt_stays_a_cancel():
    interrupt = Interrupt()

    async def work() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        interrupt.run(work())


def test_a_listener_hears_the_fire_once_and_a_late_one_hears_it_at_once():
    interrupt = Interrupt()
    heard: list[str] = []
    interrupt.when_fired(heard.append)
    interrupt.fire("stopping")
    interrupt.fire("again")
    interrupt.when_fired(heard.append)  # asked after the fire: told now
    assert heard == ["stopping", "stopping"]


def test_a_listener_during_a_step_hears_a_fire_within_it_and_none_after_it():
    interrupt = Interrupt()
    heard: list[str] = []
    with interrupt.during(lambda reason: heard.append(f"first {reason}")):
        pass
    with interrupt.during(lambda reason: heard.append(f"second {reason}")):
        interrupt.fire("stop")
    with interrupt.during(lambda reason: heard.append(f"third {reason}")):
        pass  # fired already: told at once, on entry
    assert heard == ["second stop", "third stop"]
