"""A worker's task claims its run on its own thread, before the run worker's loop hears of it.

The claim and its reads are the last step before the sandbox starts: they wait neither for
the loop (busy with other runs' events) nor behind other runs' writes on the DB thread. A
cancel that comes before the loop could hear of the run is still the run's end if the claim
made it this worker's, and nothing of another worker's run.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from jazzmine.sandbox import Outcome
from jazzmine_web.runs.executor import RunExecutor
from jazzmine_web.runs.models import Run, RunEvent, RunStatus
from jazzmine_web.runs.preparation import run_claim_prepare
from jazzmine_web.runs.services import run_create

pytestmark = pytest.mark.django_db(transaction=True)

REASON = "cancelled by member"


@pytest.fixture
def busy_executor() -> Iterator[tuple[RunExecutor, threading.Event]]:
    """A run executor whose loop and DB thread are both busy until the event is set."""
    executor = RunExecutor(pool_size=1)
    free = threading.Event()
    executor._loop.call_soon_threadsafe(free.wait, 30)
    executor._db.submit(free.wait, 30)
    try:
        yield executor, free
    finally:
        free.set()
        executor.shutdown()


def queued(sandbox, member) -> Run:
    return run_create(sandbox=sandbox, user=member, body="emit_result(1)\n", start=False)


def test_the_claim_is_made_while_the_loop_and_the_db_thread_are_busy(
    busy_executor, ecommerce, member
):
    executor, free = busy_executor
    run = queued(ecommerce, member)
    future = executor.submit(run.pk, worker="w1@test")
    run.refresh_from_db()
    assert run.worker == "w1@test" and run.claimed_at is not None
    assert run.status in (RunStatus.PREPARING, RunStatus.RUNNING)
    assert not future.done()  # the loop has not taken it up yet

    # The person cancels before the loop hears of the run: it ends cancelled, unstarted.
    assert executor.cancel(run.pk, reason=REASON)
    free.set()
    assert future.result(timeout=30) == RunStatus.FAILED
    run.refresh_from_db()
    assert (run.status, run.outcome) == (RunStatus.FAILED, Outcome.CANCELLED)
    events = list(RunEvent.objects.filter(run=run).order_by("seq").values_list("type", "data"))
    assert [kind for kind, _data in events] == ["error", "exit"]
    assert events[-1][1]["message"] == REASON


def test_an_early_cancel_leaves_another_workers_run_alone(busy_executor, ecommerce, member):
    executor, free = busy_executor
    run = queued(ecommerce, member)
    assert run_claim_prepare(run_id=run.pk, worker="w2@test", known_images=frozenset())
    future = executor.submit(run.pk, worker="w1@test")  # a second delivery of its task
    assert executor.cancel(run.pk, reason=REASON)
    free.set()
    assert future.result(timeout=30) is None
    run.refresh_from_db()
    assert run.worker == "w2@test" and run.status == RunStatus.PREPARING
    assert not RunEvent.objects.filter(run=run).exists()
