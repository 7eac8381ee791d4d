"""A run's end, written by its worker, waits out a database that does not answer.

A run's events already waited; its end did not: a cancel (or a failure) whose `run_fail` met a
database busy or restarting for a moment raised out of the run's task, and the run stayed
`running`, its reason set, until the reaper ended it as lost (or for good, where none runs).
Its tokens' revocation likewise ran once, and a failed one left them valid to their lifetime.
"""

from __future__ import annotations

import pytest
from django.db import OperationalError

from jazzmine.sandbox import Outcome
from jazzmine_web.runs import executor as executor_module
from jazzmine_web.runs import services
from jazzmine_web.runs.models import RunStatus
from jazzmine_web.runs.services import run_fail, run_record_events
from tests.web.runs.held import events_of, queued
from tests.web.runs.held import unanswered as unanswered_in

pytestmark = pytest.mark.django_db(transaction=True)

REASON = "cancelled by member"
GONE = "database is locked"


def unanswered(monkeypatch, module, name: str, times: int, *, after: bool) -> list[int]:
    return unanswered_in(monkeypatch, module, name, times, message=GONE, after=after)


@pytest.mark.parametrize("after", [False, True], ids=["refused", "answer-lost"])
def test_a_cancel_whose_end_the_database_did_not_answer_ends_the_run_once(
    held_executor, monkeypatch, ecommerce, member, after
):
    executor, free = held_executor
    run = queued(ecommerce, member)
    future = executor.submit(run.pk, worker="w1@test")
    calls = unanswered(monkeypatch, services, "run_fail", 2, after=after)
    assert executor.cancel(run.pk, reason=REASON)
    free.set()
    assert future.result(timeout=30) == RunStatus.FAILED
    assert len(calls) == 3  # twice unanswered, then written
    run.refresh_from_db()
    assert (run.status, run.outcome) == (RunStatus.FAILED, Outcome.CANCELLED)
    assert events_of(run) == ["error", "exit"]  # told once, though the first try was stored
    assert run.events.get(type="exit").data["message"] == REASON


def test_an_end_unanswered_past_the_patience_is_left_to_the_reaper(
    held_executor, monkeypatch, ecommerce, member
):
    executor, free = held_executor
    monkeypatch.setattr(executor_module, "DATABASE_PATIENCE_SECONDS", 0.3)
    run = queued(ecommerce, member)
    future = executor.submit(run.pk, worker="w1@test")
    calls = unanswered(monkeypatch, services, "run_fail", 10**6, after=False)
    assert executor.cancel(run.pk, reason=REASON)
    free.set()
    with pytest.raises(OperationalError):
        future.result(timeout=30)
    assert len(calls) > 2  # tried again until the patience ran out
    run.refresh_from_db()
    # Still the worker's: its heartbeat stops with the future, and the reaper ends it.
    assert run.status in (RunStatus.PREPARING, RunStatus.RUNNING) and run.cancel_reason == ""


def test_a_runs_tokens_are_revoked_when_the_database_answers_again(
    held_executor, monkeypatch, ecommerce, member
):
    executor, free = held_executor
    run = queued(ecommerce, member)
    revoked: list[object] = []
    real = executor_module.run_credentials_revoke

    def revoke(*, run_id):
        revoked.append(run_id)
        if len(revoked) == 1:
            raise OperationalError(GONE)
        real(run_id=run_id)

    monkeypatch.setattr(executor_module, "run_credentials_revoke", revoke)
    future = executor.submit(run.pk, worker="w1@test")
    assert executor.cancel(run.pk, reason=REASON)
    free.set()
    assert future.result(timeout=30) == RunStatus.FAILED
    assert [str(run_id) for run_id in revoked] == [str(run.pk)] * 2


def test_an_ended_run_is_not_told_of_a_later_end(ecommerce, member):
    run = queued(ecommerce, member)
    run_record_events(
        run_id=run.pk,
        events=[
            {"seq": 1, "type": "result", "data": 1, "ts": 1.0},
            {"seq": 2, "type": "exit", "data": {"outcome": "result"}, "ts": 1.0},
        ],
    )
    run_fail(run_id=run.pk, outcome=Outcome.CANCELLED, message=REASON)
    run.refresh_from_db()
    assert (run.status, run.outcome) == (RunStatus.SUCCEEDED, Outcome.RESULT)
    assert events_of(run) == ["result", "exit"]
