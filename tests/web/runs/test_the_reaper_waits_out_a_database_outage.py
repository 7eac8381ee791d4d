"""A worker that found the database not answering takes no other worker for gone until a whole
heartbeat timeout after: the same outage stopped every worker's heartbeat.

Its reaper ended every run that was going on when the database answered again, before their
workers had reconnected, and its sweep would have removed their sandboxes.
"""

from __future__ import annotations

import datetime

import pytest
from django.db import OperationalError
from django.utils import timezone

from jazzmine_web.runs import tasks as run_tasks
from jazzmine_web.runs.lifecycle import run_claim
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create
from jazzmine_web.workers import process
from tests.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 1.0


@pytest.fixture
def beating(settings, monkeypatch):
    """Yield a worker beating every 50 ms, and the switch of its database: True, answering."""
    settings.JAZZMINE_HEARTBEAT_SECONDS = 0.05
    settings.JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS = TIMEOUT
    answering = {"now": True}
    real = process.services.worker_heartbeat

    def heartbeat(**kwargs):
        if not answering["now"]:
            raise OperationalError("connection failed: Connection refused")
        return real(**kwargs)

    monkeypatch.setattr(process.services, "worker_heartbeat", heartbeat)
    worker = process.WorkerProcess(name="w1@host", concurrency=1)
    monkeypatch.setattr(process, "_current", worker)
    worker._thread.start()
    try:
        yield worker, answering
    finally:
        worker._stop.set()
        worker._thread.join(5)


def _silent_run(ecommerce, member) -> Run:
    run = run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)
    assert run_claim(run_id=run.pk, worker="w2@host", running=True)
    Run.objects.filter(pk=run.pk).update(
        heartbeat_at=timezone.now() - datetime.timedelta(seconds=60)
    )
    return run


def test_no_run_is_taken_for_lost_until_a_timeout_after_the_database_answers(
    beating, ecommerce, member
):
    worker, answering = beating
    run = _silent_run(ecommerce, member)
    assert worker.silence_counts()
    answering["now"] = False
    wait_until(lambda: not worker.silence_counts(), timeout=5)
    answering["now"] = True
    # The database answers again: its silence says nothing of the other worker yet.
    assert run_tasks.runs_reap() == {"failed": 0, "requeued": 0}
    assert Run.objects.get(pk=run.pk).status == RunStatus.RUNNING
    # A whole timeout later it does.
    wait_until(worker.silence_counts, timeout=5 * TIMEOUT)
    assert run_tasks.runs_reap() == {"failed": 1, "requeued": 0}
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "(w2@host) stopped answering" in run.message


def test_a_heartbeat_failing_otherwise_changes_nothing(beating, ecommerce, member, monkeypatch):
    worker, _answering = beating

    def broken(**_kwargs):
        raise RuntimeError("a bug, not the database")

    monkeypatch.setattr(process.services, "worker_heartbeat", broken)
    run = _silent_run(ecommerce, member)
    assert worker.silence_counts()
    assert run_tasks.runs_reap() == {"failed": 1, "requeued": 0}
    assert Run.objects.get(pk=run.pk).status == RunStatus.FAILED


def test_a_process_that_is_no_worker_judges_as_before(ecommerce, member, monkeypatch):
    monkeypatch.setattr(process, "_current", None)
    run = _silent_run(ecommerce, member)
    assert process.silence_counts()
    assert run_tasks.runs_reap() == {"failed": 1, "requeued": 0}
    assert Run.objects.get(pk=run.pk).status == RunStatus.FAILED


def test_after_a_long_outage_the_wait_is_as_long_again(settings, monkeypatch):
    # A pool tries again after waits that double: after 9 s down, a worker's next try came
    # 6 s after the database was back, past a 6 s heartbeat timeout, and its run was reaped.
    settings.JAZZMINE_HEARTBEAT_TIMEOUT_SECONDS = 6.0
    clock = {"now": 1000.0}
    monkeypatch.setattr(process.time, "monotonic", lambda: clock["now"])
    outage = process.DatabaseOutage()
    assert outage.silence_counts()
    for second in range(10):  # down from 1000 to 1009, seen every second
        clock["now"] = 1000.0 + second
        outage.seen()
    clock["now"] = 1009.0 + 6.0 + 8.0  # back for a timeout, and not yet as long as it lasted
    assert not outage.silence_counts()
    clock["now"] = 1009.0 + 6.0 + 9.0
    assert outage.silence_counts()
    # A short blip much later is judged by its own length, not the old outage's.
    clock["now"] = 2000.0
    outage.seen()
    clock["now"] = 2006.0
    assert outage.silence_counts()
