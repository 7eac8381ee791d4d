"""A database that does not answer a worker's claim ends no run: the claim is tried again.

Before the claim is known to be made, nothing of the run is the worker's: it may be queued
still, or executing on another worker (a second delivery of its task). Ending it then, as the
run's own failure, failed runs that never started for a database restart, and wrote an exit
into another worker's run. A claim whose answer was lost as it committed is recognised by its
time, so the run is neither lost nor taken twice.
"""

from __future__ import annotations

import threading

import pytest
from django.db import OperationalError

from jazzmine.interrupts import Interrupt
from jazzmine_web.runs import executor as executor_module
from jazzmine_web.runs import preparation
from jazzmine_web.runs.models import RunStatus
from tests.web.runs.held import events_of, queued
from tests.web.runs.held import unanswered as unanswered_in

pytestmark = pytest.mark.django_db(transaction=True)

REASON = "cancelled by member"
GONE = "server closed the connection unexpectedly"


def unanswered(monkeypatch, name: str, times: int, *, after: bool = False) -> list[int]:
    """Make `preparation.<name>` raise as a database that stopped answering, `times` times."""
    return unanswered_in(monkeypatch, preparation, name, times, message=GONE, after=after)


def test_a_claim_the_database_did_not_answer_is_made_when_it_answers(
    held_executor, monkeypatch, ecommerce, member
):
    executor, free = held_executor
    run = queued(ecommerce, member)
    calls = unanswered(monkeypatch, "run_claimable", 3)
    future = executor.submit(run.pk, worker="w1@test")
    assert len(calls) == 4  # three unanswered, then the claim
    run.refresh_from_db()
    assert run.worker == "w1@test"
    assert run.status in (RunStatus.PREPARING, RunStatus.RUNNING)
    assert events_of(run) == []  # nothing said the run failed

    assert executor.cancel(run.pk, reason=REASON)
    free.set()
    assert future.result(timeout=30) == RunStatus.FAILED
    run.refresh_from_db()
    assert events_of(run) == ["error", "exit"]
    assert run.events.get(type="exit").data["message"] == REASON


def test_another_workers_run_is_left_alone_when_the_database_blinks(
    held_executor, monkeypatch, ecommerce, member
):
    executor, free = held_executor
    run = queued(ecommerce, member)
    assert preparation.run_claim_prepare(run_id=run.pk, worker="w2@test", known_images=frozenset())
    unanswered(monkeypatch, "run_claimable", 1)
    future = executor.submit(run.pk, worker="w1@test")  # a second delivery of its task
    free.set()
    assert future.result(timeout=30) is None
    run.refresh_from_db()
    assert (run.worker, run.status) == ("w2@test", RunStatus.PREPARING)
    assert events_of(run) == []


def test_a_claim_whose_answer_was_lost_is_known_as_this_workers(
    held_executor, monkeypatch, ecommerce, member
):
    executor, free = held_executor
    run = queued(ecommerce, member)
    calls = unanswered(monkeypatch, "run_claim", 1, after=True)
    future = executor.submit(run.pk, worker="w1@test")
    assert len(calls) == 1  # the claim was made once; the second try found it made
    run.refresh_from_db()
    assert run.worker == "w1@test" and run.status in (RunStatus.PREPARING, RunStatus.RUNNING)

    # The run is this worker's: its cancel reaches it and ends it, once.
    assert executor.cancel(run.pk, reason=REASON)
    free.set()
    assert future.result(timeout=30) == RunStatus.FAILED
    run.refresh_from_db()
    assert events_of(run) == ["error", "exit"]
    assert run.events.get(type="exit").data["message"] == REASON


def test_a_claim_made_by_another_worker_in_between_is_not_taken_for_this_ones(
    held_executor, monkeypatch, ecommerce, member
):
    executor, free = held_executor
    run = queued(ecommerce, member)
    real = preparation.run_claimable

    def meanwhile(**kwargs):
        # This worker's read goes unanswered; another worker claims the run in between.
        monkeypatch.setattr(preparation, "run_claimable", real)
        assert preparation.run_claim_prepare(
            run_id=run.pk, worker="w2@test", known_images=frozenset()
        )
        raise OperationalError(GONE)

    monkeypatch.setattr(preparation, "run_claimable", meanwhile)
    future = executor.submit(run.pk, worker="w1@test")
    free.set()
    assert future.result(timeout=30) is None
    run.refresh_from_db()
    assert (run.worker, run.status) == ("w2@test", RunStatus.PREPARING)
    assert events_of(run) == []


def test_a_stopping_worker_leaves_the_run_queued_for_the_reaper(
    held_executor, monkeypatch, ecommerce, member
):
    executor, free = held_executor
    run = queued(ecommerce, member)
    calls = unanswered(monkeypatch, "run_claimable", 10**6)
    stop = Interrupt()
    threading.Timer(0.3, stop.fire, args=("the worker is stopping",)).start()
    future = executor.submit(run.pk, worker="w1@test", stop=stop)
    free.set()
    assert future.result(timeout=30) is None
    assert len(calls) > 1  # tried again until the worker stopped
    run.refresh_from_db()
    assert (run.status, run.worker) == (RunStatus.QUEUED, "")
    assert events_of(run) == []


def test_a_claim_unanswered_past_the_patience_leaves_the_run_queued(
    held_executor, monkeypatch, ecommerce, member
):
    executor, free = held_executor
    monkeypatch.setattr(executor_module, "DATABASE_PATIENCE_SECONDS", 0.3)
    run = queued(ecommerce, member)
    unanswered(monkeypatch, "run_claimable", 10**6)
    future = executor.submit(run.pk, worker="w1@test")
    free.set()
    assert future.result(timeout=30) is None
    run.refresh_from_db()
    assert (run.status, run.worker) == (RunStatus.QUEUED, "")
    assert events_of(run) == []
