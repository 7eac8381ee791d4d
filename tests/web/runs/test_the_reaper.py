"""The reaper ends runs whose worker went silent and queues again runs nobody claimed."""

from __future__ import annotations

import datetime

import pytest
from django.utils import timezone

from jazzmine_web.runs.lifecycle import run_claim, runs_heartbeat, runs_reap
from jazzmine_web.runs.models import Run, RunStatus
from jazzmine_web.runs.services import run_create
from jazzmine_web.workers.models import Worker
from jazzmine_web.workers.services import worker_register, workers_dead

pytestmark = pytest.mark.django_db


def queued(ecommerce, member) -> Run:
    return run_create(sandbox=ecommerce, user=member, body="emit_result(1)\n", start=False)


def ago(seconds: float) -> datetime.datetime:
    return timezone.now() - datetime.timedelta(seconds=seconds)


def test_a_run_whose_worker_went_silent_fails_saying_which_worker(ecommerce, member):
    run = queued(ecommerce, member)
    assert run_claim(run_id=run.pk, worker="w1@host")
    Run.objects.filter(pk=run.pk).update(heartbeat_at=ago(31))
    assert runs_reap() == {"failed": 1, "requeued": 0}
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.outcome == "worker_lost"
    assert "w1@host" in run.message and "stopped answering" in run.message
    assert [e.type for e in run.events.all()] == ["error", "exit"]


def test_a_run_whose_worker_is_alive_is_left_alone(ecommerce, member):
    run = queued(ecommerce, member)
    run_claim(run_id=run.pk, worker="w1@host")
    Run.objects.filter(pk=run.pk).update(heartbeat_at=ago(20))
    assert runs_reap() == {"failed": 0, "requeued": 0}
    run.refresh_from_db()
    assert run.status == RunStatus.PREPARING


def test_reaping_twice_ends_a_run_once(ecommerce, member):
    run = queued(ecommerce, member)
    run_claim(run_id=run.pk, worker="w1@host")
    Run.objects.filter(pk=run.pk).update(heartbeat_at=ago(60))
    runs_reap()
    assert runs_reap() == {"failed": 0, "requeued": 0}
    assert Run.objects.get(pk=run.pk).events.count() == 2


def test_a_run_can_be_claimed_once(ecommerce, member):
    run = queued(ecommerce, member)
    assert run_claim(run_id=run.pk, worker="w1@host")
    assert not run_claim(run_id=run.pk, worker="w2@host")
    assert Run.objects.get(pk=run.pk).worker == "w1@host"


def test_a_cancelled_queued_run_is_never_claimed(ecommerce, member):
    from jazzmine_web.runs.lifecycle import run_cancel

    run = queued(ecommerce, member)
    assert run_cancel(run=run, user=member)
    assert not run_claim(run_id=run.pk, worker="w1@host")
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and run.outcome == "cancelled"


def test_a_queued_run_nobody_claimed_is_queued_again(ecommerce, member, settings):
    run = queued(ecommerce, member)
    Run.objects.filter(pk=run.pk).update(
        enqueued_at=ago(settings.JAZZMINE_REQUEUE_AFTER_SECONDS + 1)
    )
    assert runs_reap() == {"failed": 0, "requeued": 1}
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED
    assert run.enqueued_at > ago(5)


def test_the_heartbeat_keeps_runs_alive_and_names_those_ended_for_their_worker(ecommerce, member):
    alive, reaped, done, gone = (queued(ecommerce, member) for _ in range(4))
    worker_register(name="w1@host", boot="b", hostname="h", pid=1, docker_host="", concurrency=2)
    for run in (alive, reaped, done, gone):
        run_claim(run_id=run.pk, worker="w1@host")
    Run.objects.filter(pk=alive.pk).update(heartbeat_at=ago(60))
    Run.objects.filter(pk=reaped.pk).update(status=RunStatus.FAILED, outcome="worker_lost")
    # Ended by itself: its worker is only finishing up, and must not be cut short.
    Run.objects.filter(pk=done.pk).update(status=RunStatus.SUCCEEDED, outcome="result")
    Run.objects.filter(pk=gone.pk).delete()
    ids = [str(run.pk) for run in (alive, reaped, done, gone)]
    assert runs_heartbeat(worker="w1@host", ids=ids) == [str(reaped.pk), str(gone.pk)]
    assert Run.objects.get(pk=alive.pk).heartbeat_at > ago(5)


def test_a_worker_that_stopped_beating_is_dead(ecommerce, member):
    worker_register(name="w1@host", boot="b", hostname="h", pid=1, docker_host="", concurrency=2)
    worker_register(name="w2@host", boot="b", hostname="h", pid=2, docker_host="", concurrency=2)
    Worker.objects.filter(name="w2@host").update(heartbeat_at=ago(31))
    assert workers_dead() == ["w2@host"]


def test_a_run_someone_cancelled_whose_worker_died_ends_cancelled_saying_both(ecommerce, member):
    run = queued(ecommerce, member)
    assert run_claim(run_id=run.pk, worker="w1@host")
    Run.objects.filter(pk=run.pk).update(heartbeat_at=ago(31), cancel_reason="cancelled by ada")
    assert runs_reap() == {"failed": 1, "requeued": 0}
    run.refresh_from_db()
    assert (run.status, run.outcome) == (RunStatus.FAILED, "cancelled")
    assert run.message.startswith("cancelled by ada (the worker executing this run (w1@host)")
